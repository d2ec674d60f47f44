/**
 * API Gateway's WebSocket API for the simulation, as its Developer Guide describes it:
 * - `$connect` runs before the socket opens; a refusal ends the handshake;
 * - every client frame is its own invocation of the route's function, handed over after a
 *   delay of its own: frames of one connection may run concurrently and in any order;
 * - `@connections` (PostToConnection) takes time; a post lands in the client's stream at one
 *   instant inside the call, so two concurrent posts may arrive in either order; a gone
 *   connection answers 410; a client that stopped reading fills its buffer and posts are then
 *   throttled (429); `DeleteConnection` closes;
 * - `$disconnect` is best effort: it may never run.
 * The poster answers as the relay's `ConnectionPoster` port does (attempts with backoff).
 */
import type { ConnectionPoster, PostOutcome } from '../../src/relay/ports/connection-poster.ts';
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';

/** A client's end of one connection. */
export interface ClientEnd {
  /** A frame the relay posted, in the order they land; `postedAtMs` when it waited in the buffer of a client not reading. */
  receive(text: string, postedAtMs?: number): void;
  /** The connection ended (the relay closed it, or the client did). */
  closed(byRelay: boolean): void;
  /** Whether the client reads its socket now; a client that does not fills its buffer. */
  reading(): boolean;
  /** A post refused with 429 because the client's buffer was full (the relay may drop a `debug`/`info` event on it). */
  throttled?(text: string): void;
}

export type RouteKey = '$connect' | '$default' | '$disconnect';

export interface SocketRoute {
  (route: RouteKey, connectionId: string, body: string, receivedAtMs: number): Promise<{ statusCode: number }>;
}

interface Connection {
  id: string;
  client: ClientEnd;
  open: boolean;
  /** Frames posted while the client was not reading. */
  buffered: Array<{ text: string; postedAtMs: number }>;
}

export interface GatewayFaults {
  /** Extra ms before a frame's invocation starts (a cold or busy integration). */
  handOffDelay(text: string): number;
  /** Extra ms a post takes (a slow API Gateway answer). */
  slowPost(): number;
}

export interface GatewayStats {
  posts: number;
  /** Posts of events (frames whose `type` has a dot) that landed (or were buffered). */
  eventPosts: number;
  throttled: number;
  gone: number;
}

/** Frames a client that stopped reading lets pile up before posts are throttled. */
const BUFFERED_FRAMES = 8;

export class SimulatedWebSocketGateway {
  readonly stats: GatewayStats = { posts: 0, eventPosts: 0, throttled: 0, gone: 0 };
  private readonly connections = new Map<string, Connection>();
  private nextId = 1;
  /** Sees every post's outcome (tracing). */
  onPost?: (connectionId: string, text: string, outcome: PostOutcome) => void;

  constructor(
    private readonly time: VirtualTime,
    private readonly random: Random,
    private readonly route: SocketRoute,
    private readonly faults: GatewayFaults,
  ) {}

  /** Opens a connection: `$connect` decides; undefined when it refused. */
  async connect(client: ClientEnd): Promise<string | undefined> {
    const id = `c${String(this.nextId++).padStart(4, '0')}=`;
    await this.time.sleep(this.random.latency(5, 50));
    const answer = await this.route('$connect', id, '', this.time.now());
    if (answer.statusCode !== 200) return undefined;
    this.connections.set(id, { id, client, open: true, buffered: [] });
    return id;
  }

  /** A client frame: handed to `$default` after its own delay. */
  send(connectionId: string, text: string): void {
    const connection = this.connections.get(connectionId);
    if (connection === undefined || !connection.open) return;
    const receivedAtMs = this.time.now();
    const delay = this.random.latency(3, 30) + this.faults.handOffDelay(text);
    this.time.at(delay, () => {
      void this.route('$default', connectionId, text, receivedAtMs);
    });
  }

  /** The client closes its socket. */
  clientClose(connectionId: string): void {
    this.end(connectionId, false);
  }

  /** The client reads again: what piled up is delivered. */
  resumeReading(connectionId: string): void {
    const connection = this.connections.get(connectionId);
    if (connection === undefined || !connection.open) return;
    const buffered = connection.buffered.splice(0);
    for (const { text, postedAtMs } of buffered) connection.client.receive(text, postedAtMs);
  }

  readonly poster: ConnectionPoster = {
    post: async (connectionId: string, text: string, options?: { attempts?: number }): Promise<PostOutcome> => {
      const attempts = options?.attempts ?? 3;
      for (let attempt = 1; ; attempt += 1) {
        const outcome = await this.postOnce(connectionId, text);
        if (outcome !== 'throttled' || attempt >= attempts) return outcome;
        await this.time.sleep(20 * 2 ** attempt + this.random.next() * 20);
      }
    },
    close: async (connectionId: string): Promise<void> => {
      await this.time.sleep(this.random.latency(5, 40));
      this.end(connectionId, true);
    },
    isOpen: async (connectionId: string): Promise<boolean> => {
      await this.time.sleep(this.random.latency(5, 40));
      return this.connections.get(connectionId)?.open === true;
    },
  };

  private async postOnce(connectionId: string, text: string): Promise<PostOutcome> {
    this.stats.posts += 1;
    const total = this.random.latency(10, 150) + this.faults.slowPost();
    const landsAfter = this.random.next() * total;
    await this.time.sleep(landsAfter);
    const connection = this.connections.get(connectionId);
    let outcome: PostOutcome;
    if (connection === undefined || !connection.open) outcome = 'gone';
    else if (!connection.client.reading()) {
      if (connection.buffered.length >= BUFFERED_FRAMES) outcome = 'throttled';
      else {
        connection.buffered.push({ text, postedAtMs: this.time.now() });
        outcome = 'sent';
      }
    } else {
      connection.client.receive(text);
      outcome = 'sent';
    }
    this.onPost?.(connectionId, text, outcome);
    if (outcome === 'sent' && isEventText(text)) this.stats.eventPosts += 1;
    if (outcome === 'throttled') {
      this.stats.throttled += 1;
      connection?.client.throttled?.(text);
    }
    if (outcome === 'gone') this.stats.gone += 1;
    await this.time.sleep(total - landsAfter);
    return outcome;
  }

  private end(connectionId: string, byRelay: boolean): void {
    const connection = this.connections.get(connectionId);
    if (connection === undefined || !connection.open) return;
    connection.open = false;
    connection.buffered = [];
    connection.client.closed(byRelay);
    // Best effort: most of the time `$disconnect` runs, a little later.
    if (this.random.chance(0.9)) {
      this.time.at(this.random.latency(10, 200), () => {
        void this.route('$disconnect', connectionId, '', this.time.now());
      });
    }
  }
}

/** Events carry a dotted `type`; frames never do (AEP-0003 §2). */
function isEventText(text: string): boolean {
  const type = /"type":"([^"]*)"/.exec(text)?.[1];
  return type !== undefined && type.includes('.');
}
