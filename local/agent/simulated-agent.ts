/**
 * A reference control-capable target (AEP-0004 §7) for tests and for people trying the relay:
 * it connects over WebSocket, declares `control.accepts` at hello, emits a session with a run,
 * and answers commands:
 * - dedupe on `(source, id)`; a redelivered command gets the recorded ack re-sent
 *   byte-identically (§3), never a second decision;
 * - types outside `accepts` are nacked `unsupported` (§4.2);
 * - `control.cancel` → `control.accepted`, then exactly one `run.cancelled` cause-linked to it;
 * - `control.attention.respond` to a pending request it raised → `control.accepted`,
 *   `attention.answered`, `attention.resolved`, all `subject` = the request id (AEP-0002 §7).
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { ulidFactory } from '../../src/protocol/ulid.ts';

export interface SimulatedAgentOptions {
  /** The relay's base URL (http:// or https://). */
  baseUrl: string;
  token: string;
  agent: string;
  session: string;
  accepts: readonly string[];
  /** Restart generation of this agent's counter (AEP-0001 §7). */
  epoch?: number;
  instance?: string;
  onLog?: (line: string) => void;
}

type Json = Record<string, unknown>;

export class SimulatedAgent {
  private socket: WebSocket | undefined;
  private seq = 0;
  private readonly mintId = ulidFactory(Date.now, (length) => randomBytes(length));
  private readonly source: string;
  readonly run: string;
  /** Recorded ack text per command `(source, id)`. */
  private readonly acks = new Map<string, string>();
  /** Attention requests raised and not yet resolved, by id. */
  private readonly pendingAttention = new Set<string>();
  /** Every command text this agent received, in order (for tests). */
  readonly receivedCommands: string[] = [];

  constructor(private readonly options: SimulatedAgentOptions) {
    this.source = `aep://simulator/agent/${options.agent}/session/${options.session}`;
    this.run = `run-${this.mintId().slice(-8).toLowerCase()}`;
  }

  async start(): Promise<void> {
    const url = `${this.options.baseUrl.replace(/^http/, 'ws')}/socket`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.options.token}` } });
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const helloReply = new Promise<void>((resolve) => {
      const onMessage = (data: WebSocket.RawData) => {
        const frame = JSON.parse(data.toString()) as Json;
        if (frame.type === 'hello') {
          socket.off('message', onMessage);
          resolve();
        }
      };
      socket.on('message', onMessage);
    });
    this.sendJson({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: this.options.agent, instance: this.options.instance ?? `simulator/${process.pid}` },
      capabilities: { emits: ['session', 'run', 'attention', 'control'], control: { accepts: [...this.options.accepts], ack_window_ms: 10_000 } },
    });
    await helloReply;
    socket.on('message', (data) => this.onMessage(data.toString()));
    this.emit('session.started', { data: { client: { name: 'aep-relay-simulator', version: '0.1.0' } } });
    this.emit('run.started', { run: this.run, data: { trigger: 'user' } });
  }

  /** Raises an attention request and returns its id. */
  requestAttention(prompt = 'simulator requests permission: demo'): string {
    const id = this.emit('attention.requested', {
      run: this.run,
      severity: 'notice',
      subject: 'demo',
      data: { kind: 'permission', prompt, options: [{ id: 'allow', label: 'allow' }, { id: 'deny', label: 'deny' }], respond_via: ['control'] },
    });
    this.pendingAttention.add(id);
    return id;
  }

  /** Resolves when the agent's socket closes (the relay closed it, or `stop()`). */
  closed(): Promise<void> {
    const socket = this.socket;
    if (socket === undefined || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => socket.once('close', () => resolve()));
  }

  async stop(): Promise<void> {
    const socket = this.socket;
    if (socket === undefined || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }

  private onMessage(text: string): void {
    let message: Json;
    try {
      message = JSON.parse(text) as Json;
    } catch {
      return;
    }
    const type = typeof message.type === 'string' ? message.type : '';
    if (!(type.startsWith('control.') || /^x\.[a-z0-9_-]+\.control\./.test(type))) {
      if (type === 'error') this.log(`relay error: ${text}`);
      return;
    }
    this.receivedCommands.push(text);
    const key = `${String(message.source)}\u0000${String(message.id)}`;
    const recorded = this.acks.get(key);
    if (recorded !== undefined) {
      // Redelivery: the recorded ack, byte-identically (AEP-0004 §3).
      this.socket?.send(recorded);
      return;
    }
    this.decide(key, type, message);
  }

  private decide(key: string, type: string, command: Json): void {
    const commandId = String(command.id);
    const nack = (reason: string) => this.acks.set(key, this.emitText('control.rejected', { cause: commandId, data: { reason } }));
    if (!this.options.accepts.includes(type)) return void nack('unsupported');
    if (type === 'control.attention.respond') {
      const requestId = typeof command.subject === 'string' ? command.subject : '';
      if (!this.pendingAttention.has(requestId)) return void nack('invalid');
      this.pendingAttention.delete(requestId);
      this.acks.set(key, this.emitText('control.accepted', { cause: commandId, data: {} }));
      const answer = (command.data as Json | undefined)?.answer ?? {};
      const answered = this.emit('attention.answered', { subject: requestId, cause: commandId, data: { answer: structuralAnswer(answer), via: 'control' } });
      this.emit('attention.resolved', { subject: requestId, cause: answered, data: { resolution: 'answered' } });
      return;
    }
    this.acks.set(key, this.emitText('control.accepted', { cause: commandId, data: {} }));
    if (type === 'control.cancel') this.emit('run.cancelled', { run: this.run, cause: commandId, data: { by: 'control' } });
    else this.emit('progress.status', { run: this.run, cause: commandId, data: { phase: type === 'control.pause' ? 'paused' : 'resumed' } });
  }

  private emit(type: string, fields: Json): string {
    const text = this.emitText(type, fields);
    return String((JSON.parse(text) as Json).id);
  }

  private emitText(type: string, fields: Json): string {
    const event = {
      aep: '0.1',
      id: this.mintId(),
      type,
      time: new Date().toISOString(),
      source: this.source,
      agent: this.options.agent,
      session: this.options.session,
      seq: this.seq,
      epoch: this.options.epoch ?? 0,
      ...fields,
    };
    this.seq += 1;
    const text = JSON.stringify(event);
    this.socket?.send(text);
    this.log(`emitted ${type} seq ${event.seq}`);
    return text;
  }

  private sendJson(frame: Json): void {
    this.socket?.send(JSON.stringify(frame));
  }

  private log(line: string): void {
    this.options.onLog?.(line);
  }
}

/** Keeps only the option id of an answer: the simulator records structure, never free text (capture metadata). */
function structuralAnswer(answer: unknown): Json {
  const option = (answer as Json | undefined)?.option;
  return typeof option === 'string' ? { option } : {};
}
