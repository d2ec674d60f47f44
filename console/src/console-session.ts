/**
 * Everything a signed-in console holds: the relay client, the one WebSocket, the attention
 * inbox and the commands sent, and whether the token is an admin token. Views read it and
 * re-render on `changed`.
 */
import { AttentionBook } from './attention.ts';
import type { AepObject } from './attention.ts';
import { CommandBook } from './commands.ts';
import { LiveSocket } from './live-socket.ts';
import type { SocketState } from './live-socket.ts';
import { RelayClient } from './relay-client.ts';
import { senderIdentityOf } from './sender-identity.ts';

/** The inbox's subscription (AEP-0003 §6.5): the attention lifecycle and command acks, replayed from what the relay holds. */
export const INBOX_FILTER = { type: ['attention.*', 'control.accepted', 'control.rejected'] };

export type AdminAccess = 'unknown' | 'admin' | 'none';

export class ConsoleSession {
  readonly client: RelayClient;
  readonly socket: LiveSocket;
  readonly attention = new AttentionBook();
  readonly commands = new CommandBook();
  socketState: SocketState = 'connecting';
  socketDetail: string | undefined;
  /** Why the inbox cannot watch, when the relay refused its subscription. */
  inboxRefusal: string | undefined;
  adminAccess: AdminAccess = 'unknown';
  /** Events that answered or resolved a command, by command id (for the outcome line). */
  readonly followUps = new Map<string, AepObject[]>();
  /** The last command sent for each attention request, by request id. */
  readonly answers = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private stopped = false;

  constructor(token: string) {
    this.client = new RelayClient(token);
    this.socket = new LiveSocket(this.client);
    this.socket.on('state', (state, detail) => {
      this.socketState = state;
      this.socketDetail = detail;
      this.changed();
    });
    this.socket.on('event', (event) => this.onEvent(event));
    this.socket.on('error', (frame) => this.onErrorFrame(frame));
    this.socket.subscribe('inbox', INBOX_FILTER, 'all');
  }

  start(): void {
    this.stopped = false;
    void this.startSocket();
    void this.probeAdmin();
  }

  /**
   * Learns who commands are sent as from the token's grant (`GET /token`; a bound token speaks
   * as its first agent, `sender-identity.ts`), then opens the socket. A relay without the
   * route (404) or a failed read leaves the unbound default, `console`.
   */
  private async startSocket(): Promise<void> {
    const grant = await this.client.json<{ agents?: unknown }>('GET', '/token');
    const agents = grant.ok && Array.isArray(grant.value?.agents) ? grant.value.agents.filter((agent): agent is string => typeof agent === 'string') : undefined;
    this.socket.sender = senderIdentityOf(agents === undefined || agents.length === 0 ? undefined : agents);
    this.changed();
    if (!this.stopped) this.socket.start();
  }

  stop(): void {
    this.stopped = true;
    this.socket.stop();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Sends a command and starts its ack-window clock (AEP-0004 §3: silence is `timeout`). */
  sendCommand(type: string, session: string, fields: AepObject = {}, ackWindowMs = 10_000): string | undefined {
    const command = this.socket.command(type, session, fields);
    if (command === undefined) return undefined;
    this.commands.sent(command);
    setTimeout(() => {
      this.commands.timedOut(String(command.id));
      this.changed();
    }, ackWindowMs + 2000);
    this.changed();
    return String(command.id);
  }

  /** Answers an attention request with `control.attention.respond` (AEP-0004 §5, §6 correlation). */
  answer(requestId: string, session: string, answer: AepObject): string | undefined {
    const id = this.sendCommand('control.attention.respond', session, { subject: requestId, cause: requestId, data: { answer } });
    if (id !== undefined) this.answers.set(requestId, id);
    this.changed();
    return id;
  }

  private onEvent(event: AepObject): void {
    let changed = this.attention.apply(event);
    if (this.commands.apply(event) !== undefined) changed = true;
    const cause = typeof event.cause === 'string' ? event.cause : undefined;
    if (cause !== undefined && this.commands.get(cause) !== undefined) {
      const known = this.followUps.get(cause) ?? [];
      // A reconnect replays what the inbox held: each event is kept once.
      if (!known.some((seen) => seen.id === event.id)) {
        this.followUps.set(cause, [...known, event]);
        changed = true;
      }
    }
    if (changed) this.changed();
  }

  private onErrorFrame(frame: AepObject): void {
    if (frame.id === 'inbox') {
      this.inboxRefusal = `the relay refused to deliver attention requests to this token (${String(frame.code)}: ${String(frame.detail ?? '')})`;
      this.changed();
      return;
    }
    if (this.commands.apply(frame) !== undefined) this.changed();
  }

  /** Admin tokens may list tokens; anything else is answered 403 and the admin pane stays hidden. */
  private async probeAdmin(): Promise<void> {
    const result = await this.client.json('GET', '/admin/tokens');
    this.adminAccess = result.ok ? 'admin' : 'none';
    this.changed();
  }
}
