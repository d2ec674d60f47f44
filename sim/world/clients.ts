/**
 * The simulated clients: emitters that pipeline, skip positions, restart epochs and share a
 * session name; consumers that subscribe before their session exists, drop at any frame,
 * resume from a position they were given, and stop reading for a while. They speak AEP 0.1 over
 * the simulated gateway and record everything the invariants are checked against.
 */
import type { Position } from '../../src/protocol/positions.ts';
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';
import type { ClientEnd, SimulatedWebSocketGateway } from '../aws/websocket-gateway.ts';
import type { ConsumerPlan, EmitterPlan } from './scenario.ts';

export interface SentEvent {
  id: string;
  source: string;
  session: string;
  epoch: number;
  seq: number;
  severity: string;
}

export type Trace = (line: string) => void;

function comparePositions(a: { epoch: number; seq: number }, b: { epoch: number; seq: number }): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq - b.seq;
}

/** One emitter: hello, then its events, resending what the relay refused as `unavailable`. */
export class Emitter {
  readonly sent: SentEvent[] = [];
  readonly source: string;
  /** Events refused in-band for good (not `unavailable`): never admitted. */
  readonly refused = new Map<string, string>();
  done = false;
  private connection: string | undefined;
  private readonly texts = new Map<string, string>();
  private readonly resends = new Map<string, number>();

  constructor(
    readonly index: number,
    private readonly plan: EmitterPlan,
    private readonly gateway: SimulatedWebSocketGateway,
    private readonly time: VirtualTime,
    private readonly random: Random,
    private readonly trace: Trace,
  ) {
    this.source = `aep://sim/agent/${plan.agent}/emitter/${index}`;
  }

  async run(): Promise<void> {
    await this.time.sleep(this.plan.startMs);
    let epoch = this.plan.firstEpoch;
    let seq = 0;
    await this.open();
    for (let n = 0; n < this.plan.events; n += 1) {
      if (this.plan.restartAfter !== undefined && n === this.plan.restartAfter) {
        // A restart: the old socket goes (its frames may still be in flight), a new epoch begins.
        const old = this.connection;
        this.time.at(this.random.int(0, 50), () => old !== undefined && this.gateway.clientClose(old));
        epoch += 1;
        seq = 0;
        await this.open();
      }
      if (n > 0 && this.random.chance(this.plan.skipChance)) seq += this.random.int(1, 3);
      const severity = this.plan.severities === 'notice' ? 'notice' : this.random.pick(['debug', 'info', 'notice', 'warning']);
      const event: SentEvent = { id: `${this.plan.agent}-${this.index}-${String(n).padStart(3, '0')}`, source: this.source, session: this.plan.session, epoch, seq, severity };
      const text = JSON.stringify({
        aep: '0.1',
        id: event.id,
        type: 'progress.status',
        time: new Date(this.time.now()).toISOString(),
        source: this.source,
        agent: this.plan.agent,
        session: this.plan.session,
        seq,
        ...(epoch === 0 ? {} : { epoch }),
        severity,
        data: { message: `event ${n}` },
      });
      this.sent.push(event);
      this.texts.set(event.id, text);
      this.sendEvent(event.id);
      seq += 1;
      if (this.plan.spacingMs > 0) await this.time.sleep(this.random.next() * this.plan.spacingMs * 2);
    }
    this.done = true;
  }

  private sendEvent(id: string): void {
    if (this.connection !== undefined) this.gateway.send(this.connection, this.texts.get(id) as string);
  }

  private async open(): Promise<void> {
    let helloAnswered!: () => void;
    const answered = new Promise<void>((resolve) => {
      helloAnswered = resolve;
    });
    const client: ClientEnd = {
      receive: (text) => {
        const frame = JSON.parse(text) as Record<string, unknown>;
        if (frame.type === 'hello') helloAnswered();
        if (frame.type === 'error' && typeof frame.cause === 'string') this.refusal(frame.cause, String(frame.code));
      },
      closed: () => helloAnswered(),
      reading: () => true,
    };
    for (;;) {
      const id = await this.gateway.connect(client);
      if (id !== undefined) {
        this.connection = id;
        break;
      }
      await this.time.sleep(500);
    }
    this.gateway.send(this.connection, JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: this.plan.agent, instance: `sim/${this.index}` }, capabilities: {} }));
    if (this.plan.waitsForHello) await Promise.race([answered, this.time.sleep(5_000)]);
  }

  /** `unavailable`: resend the same event (same id), as AEP-0003 §3 asks of an at-least-once emitter. */
  private refusal(id: string, code: string): void {
    if (code !== 'unavailable') {
      this.refused.set(id, code);
      this.trace(`emitter ${this.index} event ${id} refused ${code}`);
      return;
    }
    const tries = (this.resends.get(id) ?? 0) + 1;
    this.resends.set(id, tries);
    if (tries > 8) return;
    this.time.at(200 + this.random.next() * 800, () => this.sendEvent(id));
  }
}

export interface ReceivedEvent {
  id: string;
  source: string;
  session: string;
  epoch: number;
  seq: number;
  severity: string;
  atMs: number;
  /** When the relay's post of it landed: `atMs`, unless it waited for a client that was not reading. */
  postedAtMs: number;
}

/** An event's dedupe key, `(source, id)` (AEP-0001 §7.4). */
export const eventKey = (event: { source: string; id: string }): string => `${event.source}\u0000${event.id}`;

/** One connection of a consumer, as the invariants need it. */
export interface ConsumerConnection {
  index: number;
  connectionId?: string;
  /** The resume position it subscribed from (strictly after). */
  from: Position;
  /** Which emitter's event gave that position, when one did (a `closing` names no source). */
  fromSource?: string;
  subscribedAtMs?: number;
  events: ReceivedEvent[];
  closings: Array<{ atMs: number; delivered: Array<{ session: string; epoch: number; seq: number }> }>;
  errors: Array<{ code: string; detail?: string }>;
  /** The relay's first frame on it (`type`, and the `id` an error answered), if any came. */
  firstFrame?: { type: string; id?: string; atMs: number };
  /** When it sent its hello (virtual ms). */
  helloAtMs?: number;
  /** Whether the gateway throttled posts to it (it stopped reading): `debug`/`info` may be dropped. */
  throttled: boolean;
  /** The `(source, id)` keys of events whose posts to it the gateway throttled. */
  throttledEvents: Set<string>;
  ended?: { atMs: number; byRelay: boolean };
}

/** A consumer across its reconnections (one chain of connections, AEP-0003 §7). */
export class Consumer {
  readonly connections: ConsumerConnection[] = [];
  /** When it stopped reading and read again (virtual ms): nothing reaches it meanwhile, and the relay may end its connection (I5). */
  readonly pauses: Array<{ fromMs: number; toMs: number }> = [];
  private received = 0;
  private highest: { epoch: number; seq: number; source: string } | undefined;
  private paused = false;
  private dropsLeft: number[];

  constructor(
    readonly index: number,
    readonly plan: ConsumerPlan,
    private readonly gateway: SimulatedWebSocketGateway,
    private readonly time: VirtualTime,
    private readonly random: Random,
    private readonly trace: Trace,
  ) {
    this.dropsLeft = [...plan.dropsAfter];
  }

  async run(): Promise<void> {
    await this.time.sleep(this.plan.startMs);
    await this.open({ session: this.plan.session, epoch: 0, seq: -1 });
  }

  private async open(from: Position, fromSource?: string): Promise<void> {
    const connection: ConsumerConnection = { index: this.connections.length, from, ...(fromSource === undefined ? {} : { fromSource }), events: [], closings: [], errors: [], throttled: false, throttledEvents: new Set() };
    this.connections.push(connection);
    const client: ClientEnd = {
      receive: (text, postedAtMs) => this.receive(connection, text, postedAtMs),
      closed: (byRelay) => {
        if (connection.ended !== undefined) return;
        connection.ended = { atMs: this.time.now(), byRelay };
        this.trace(`consumer ${this.index} connection ${connection.index} ended by ${byRelay ? 'relay' : 'client'}`);
        if (byRelay) this.reopenSoon();
      },
      reading: () => {
        if (this.paused) connection.throttled = true;
        return !this.paused;
      },
      throttled: (text) => {
        const frame = JSON.parse(text) as Record<string, unknown>;
        if (typeof frame.type === 'string' && frame.type.includes('.')) connection.throttledEvents.add(eventKey({ source: String(frame.source), id: String(frame.id) }));
      },
    };
    let id: string | undefined;
    while (id === undefined) {
      id = await this.gateway.connect(client);
      if (id === undefined) await this.time.sleep(500);
    }
    connection.connectionId = id;
    this.trace(`consumer ${this.index} connection ${connection.index} (${id}) from ${from.epoch}:${from.seq}`);
    connection.helloAtMs = this.time.now();
    this.gateway.send(id, JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} }));
    this.gateway.send(id, JSON.stringify({ type: 'subscribe', id: 'sub', filter: { session: this.plan.session }, from: [from] }));
  }

  private receive(connection: ConsumerConnection, text: string, postedAtMs = this.time.now()): void {
    if (connection.ended !== undefined) return;
    const frame = JSON.parse(text) as Record<string, unknown>;
    connection.firstFrame ??= { type: String(frame.type), ...(typeof frame.id === 'string' && !String(frame.type).includes('.') ? { id: frame.id } : {}), atMs: postedAtMs };
    if (typeof frame.type === 'string' && frame.type.includes('.')) {
      const event: ReceivedEvent = { id: String(frame.id), source: String(frame.source), session: String(frame.session), epoch: typeof frame.epoch === 'number' ? frame.epoch : 0, seq: Number(frame.seq), severity: typeof frame.severity === 'string' ? frame.severity : 'info', atMs: this.time.now(), postedAtMs };
      connection.events.push(event);
      this.received += 1;
      if (this.highest === undefined || comparePositions(event, this.highest) > 0) this.highest = { epoch: event.epoch, seq: event.seq, source: event.source };
      if (this.plan.pause !== undefined && this.received === this.plan.pause.afterEvents && !this.paused) this.pauseFor(this.plan.pause.forMs);
      if (this.dropsLeft[0] !== undefined && this.received >= this.dropsLeft[0]) {
        this.dropsLeft.shift();
        // Drop at this frame: the socket closes from the client's side, then it resumes.
        if (connection.connectionId !== undefined) this.gateway.clientClose(connection.connectionId);
        this.reopenSoon();
      }
      return;
    }
    if (frame.type === 'subscribed') connection.subscribedAtMs = this.time.now();
    if (frame.type === 'closing') connection.closings.push({ atMs: this.time.now(), delivered: ((frame.delivered as Array<{ session: string; epoch: number; seq: number }> | undefined) ?? []).map((at) => ({ session: at.session, epoch: at.epoch, seq: at.seq })) });
    if (frame.type === 'error') {
      connection.errors.push({ code: String(frame.code), ...(typeof frame.detail === 'string' ? { detail: frame.detail } : {}) });
      // A subscription (or hello) that did not open: subscribe again on a new connection.
      if ((frame.id === 'sub' || frame.id === undefined) && connection.connectionId !== undefined) {
        this.gateway.clientClose(connection.connectionId);
        this.reopenSoon();
      }
    }
  }

  private pauseFor(forMs: number): void {
    this.paused = true;
    this.pauses.push({ fromMs: this.time.now(), toMs: this.time.now() + forMs });
    this.trace(`consumer ${this.index} stops reading for ${forMs} ms`);
    this.time.at(forMs, () => {
      this.paused = false;
      // Reading again, on whichever connection it holds by then.
      const current = this.connections[this.connections.length - 1]?.connectionId;
      if (current !== undefined) this.gateway.resumeReading(current);
    });
  }

  private reopening = false;

  /** Resumes on a new connection a little later; a client that is not reading notices nothing until it reads again. */
  private reopenSoon(): void {
    if (this.reopening) return;
    this.reopening = true;
    const attempt = () => {
      if (this.paused) {
        this.time.at(100, attempt);
        return;
      }
      this.reopening = false;
      const [position, source] = this.resumePosition();
      void this.open(position, source);
    };
    this.time.at(this.random.int(20, 600), attempt);
  }

  /** Where it resumes: its highest position, or the one the last `closing` named for its session. */
  private resumePosition(): [Position, string | undefined] {
    const last = this.connections[this.connections.length - 1];
    const named = last?.closings.at(-1)?.delivered.find((at) => at.session === this.plan.session);
    if (this.plan.resumesFromClosing && named !== undefined) {
      const namedEvent = this.connections.flatMap((connection) => connection.events).find((event) => event.epoch === named.epoch && event.seq === named.seq);
      return [named, namedEvent?.source];
    }
    if (this.highest === undefined) return [this.connections[this.connections.length - 1]?.from ?? { session: this.plan.session, epoch: 0, seq: -1 }, this.connections.at(-1)?.fromSource];
    return [{ session: this.plan.session, epoch: this.highest.epoch, seq: this.highest.seq }, this.highest.source];
  }

  isOpen(): boolean {
    const last = this.connections[this.connections.length - 1];
    return last !== undefined && last.ended === undefined && last.subscribedAtMs !== undefined;
  }
}
