/**
 * The console's one WebSocket (AEP-0003 §3.5): `hello` as a consumer naming no agent
 * (`sender-identity.ts`), subscriptions, the
 * `roster` frame (§4.1), and commands (AEP-0004; control flows only on this binding). The
 * token travels as `access_token` because a browser WebSocket cannot set headers.
 * Reconnects with backoff and re-sends its subscriptions; consumers dedupe what replays.
 */
import type { Filter } from '../../src/protocol/attr-match.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import type { AepObject } from './attention.ts';
import type { RelayClient } from './relay-client.ts';
import { senderIdentityOf } from './sender-identity.ts';
import type { SenderIdentity } from './sender-identity.ts';

export type SocketState = 'connecting' | 'open' | 'closed';

export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  control?: { accepts?: unknown; ack_window_ms?: unknown };
  emits?: unknown;
  /** The relay's finding that the claimant's identity card verified (AEP-0003 §8.3), while it holds. */
  verified?: { operator?: unknown; valid_until?: unknown };
}

interface Subscription {
  filter: Filter;
  from?: 'all';
}

interface Listeners {
  /** Every event delivered by any subscription. */
  event: (event: AepObject) => void;
  /** Every `error` frame (command refusals carry `cause`, subscription refusals `id`). */
  error: (frame: AepObject) => void;
  state: (state: SocketState, detail?: string) => void;
}

/** The consumer hello, shared with the sign-in check so both ask the relay the same thing. */
export const CONSOLE_HELLO = { type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: { filters: ['attr-match'] } } as const;

const mintId = ulidFactory(Date.now, (length) => crypto.getRandomValues(new Uint8Array(length)));

export class LiveSocket {
  private socket: WebSocket | undefined;
  private ready = false;
  private stopped = false;
  private retryMs = 500;
  private rosterSeq = 0;
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly rosterWaiters = new Map<string, (entries: RosterEntry[] | string) => void>();
  private readonly listeners: { [K in keyof Listeners]: Set<Listeners[K]> } = { event: new Set(), error: new Set(), state: new Set() };
  state: SocketState = 'connecting';
  /** Who commands are sent as; set from the token's grant before the socket starts. */
  sender: SenderIdentity = senderIdentityOf(undefined);

  constructor(private readonly client: RelayClient) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close(1000, 'signed out');
  }

  on<K extends keyof Listeners>(kind: K, listener: Listeners[K]): () => void {
    this.listeners[kind].add(listener);
    return () => void this.listeners[kind].delete(listener);
  }

  /** Keeps a subscription for the life of the socket (re-sent after a reconnect). */
  subscribe(id: string, filter: Filter, from?: 'all'): void {
    this.subscriptions.set(id, { filter, ...(from === undefined ? {} : { from }) });
    if (this.ready) this.sendSubscribe(id);
  }

  /** Asks for a roster snapshot; resolves with the entries, or with the refusal's words. */
  roster(): Promise<RosterEntry[] | string> {
    if (!this.ready) return Promise.resolve('not connected to the relay');
    this.rosterSeq += 1;
    const id = `roster-${this.rosterSeq}`;
    return new Promise((resolve) => {
      this.rosterWaiters.set(id, resolve);
      this.send({ type: 'roster', id });
      setTimeout(() => {
        if (this.rosterWaiters.delete(id)) resolve('the relay did not answer the roster request');
      }, 10_000);
    });
  }

  /** Sends a command (AEP-0004 §2: seq-less, `agent` = the sender) and returns it. */
  command(type: string, session: string, fields: AepObject = {}): AepObject | undefined {
    if (!this.ready) return undefined;
    const command = { aep: '0.1', id: mintId(), type, time: new Date().toISOString(), source: this.sender.source, agent: this.sender.agent, session, ...fields };
    this.send(command);
    return command;
  }

  private connect(): void {
    this.setState('connecting');
    const socket = new WebSocket(this.client.urlWithToken('/socket', {}, 'ws'));
    this.socket = socket;
    socket.onopen = () => {
      this.send(CONSOLE_HELLO);
    };
    socket.onmessage = (message) => this.onMessage(String(message.data));
    socket.onclose = (close) => {
      this.ready = false;
      for (const [id, waiter] of this.rosterWaiters) {
        this.rosterWaiters.delete(id);
        waiter('the connection closed');
      }
      if (this.stopped) return this.setState('closed');
      this.setState('closed', close.reason || 'the connection to the relay closed; reconnecting');
      setTimeout(() => {
        if (!this.stopped) this.connect();
      }, this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 15_000);
    };
  }

  private onMessage(text: string): void {
    let message: AepObject;
    try {
      message = JSON.parse(text) as AepObject;
    } catch {
      return;
    }
    const type = typeof message.type === 'string' ? message.type : '';
    if (type.includes('.')) {
      for (const listener of this.listeners.event) listener(message);
      return;
    }
    if (type === 'hello') {
      this.ready = true;
      this.retryMs = 500;
      this.setState('open');
      for (const id of this.subscriptions.keys()) this.sendSubscribe(id);
      return;
    }
    if (type === 'roster' && typeof message.id === 'string') {
      const waiter = this.rosterWaiters.get(message.id);
      this.rosterWaiters.delete(message.id);
      waiter?.(Array.isArray(message.entries) ? (message.entries as RosterEntry[]) : []);
      return;
    }
    if (type === 'ping') return this.send({ type: 'pong', ...(message.t === undefined ? {} : { t: message.t }) });
    if (type === 'error') {
      const waiter = typeof message.id === 'string' ? this.rosterWaiters.get(message.id) : undefined;
      if (waiter !== undefined) {
        this.rosterWaiters.delete(message.id as string);
        waiter(`the relay refused the roster request (${String(message.code)})`);
      }
      for (const listener of this.listeners.error) listener(message);
    }
  }

  private sendSubscribe(id: string): void {
    const subscription = this.subscriptions.get(id);
    if (subscription === undefined) return;
    this.send({ type: 'subscribe', id, filter: subscription.filter, ...(subscription.from === undefined ? {} : { from: subscription.from }) });
  }

  private send(frame: AepObject | typeof CONSOLE_HELLO): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private setState(state: SocketState, detail?: string): void {
    this.state = state;
    for (const listener of this.listeners.state) listener(state, detail);
  }
}
