/**
 * Minimal relay clients for the benchmark (the test clients in test/support read their
 * coordinates from vitest): a WebSocket client that counts and timestamps what it receives,
 * an SSE reader, HTTP posting, and tenants with tokens written straight into DynamoDB Local.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { SCOPES } from '../src/auth/scopes.ts';
import { hashTokenSecret, mintTokenSecret } from '../src/auth/token-secret.ts';
import { ulidFactory } from '../src/protocol/ulid.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { tenantTableStores } from '../src/store/tenant-table.ts';
import { localTableNames } from '../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../local/local-credentials.ts';
import { readSse } from '../test/support/sse-reader.ts';

export type Frame = Record<string, any>;

export const mintId = ulidFactory(Date.now, (length) => randomBytes(length));

export function uniqueName(prefix: string): string {
  return `${prefix}-${mintId().slice(-10).toLowerCase()}`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every `everyMs` until it holds; throws `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: () => string, timeoutMs = 60_000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await sleep(everyMs);
  }
}

/** A tenant of its own (so each scenario reads only its own subscriptions) with a token holding every scope. */
export async function createTenant(dynamoEndpoint: string, tenant: string): Promise<string> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint: dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  try {
    const { tenants, tokens } = tenantTableStores(client, localTableNames('aep-local').tenants, Date.now);
    await tenants.ensureTenant(tenant);
    const secret = mintTokenSecret();
    await tokens.putToken({ tenant, tokenId: `bench-${mintId().toLowerCase()}`, scopes: [...SCOPES], label: 'npm run bench' }, hashTokenSecret(secret));
    return secret;
  } finally {
    client.destroy();
  }
}

export class BenchSocket {
  /** Events (frames carrying `aep`) received so far. */
  events = 0;
  private readonly listeners = new Set<(frame: Frame, atMs: number) => void>();
  private readonly closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      const atMs = performance.now();
      let frame: Frame;
      try {
        frame = JSON.parse(data.toString()) as Frame;
      } catch {
        return;
      }
      if (typeof frame.aep === 'string') this.events += 1;
      for (const listener of [...this.listeners]) listener(frame, atMs);
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static async open(baseUrl: string, token: string): Promise<BenchSocket> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${token}` } });
    const client = new BenchSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake refused: ${response.statusCode}`)));
    });
    return client;
  }

  /** Opens a socket and completes hello (and a subscribe, when given). */
  static async consumer(baseUrl: string, token: string, hello: Frame, subscribe?: Frame): Promise<BenchSocket> {
    const client = await BenchSocket.open(baseUrl, token);
    const helloReply = client.next((frame) => frame.type === 'hello' || frame.type === 'error');
    client.send({ type: 'hello', versions: ['0.1'], identity: {}, capabilities: {}, ...hello });
    const reply = await helloReply;
    if (reply.type !== 'hello') throw new Error(`hello refused: ${JSON.stringify(reply)}`);
    if (subscribe !== undefined) {
      const answer = client.next((frame) => (frame.type === 'subscribed' || frame.type === 'error') && frame.id === subscribe.id);
      client.send({ type: 'subscribe', ...subscribe });
      const subscribed = await answer;
      if (subscribed.type !== 'subscribed') throw new Error(`subscribe refused: ${JSON.stringify(subscribed)}`);
    }
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  on(listener: (frame: Frame, atMs: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  next(predicate: (frame: Frame) => boolean, timeoutMs = 15_000): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error('no matching frame in time'));
      }, timeoutMs);
      const off = this.on((frame) => {
        if (!predicate(frame)) return;
        clearTimeout(timer);
        off();
        resolve(frame);
      });
    });
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    await this.closed;
  }
}

export interface SseReader {
  status: number;
  /** Called with each message's parsed data and its arrival time. */
  onMessage(listener: (event: Frame, atMs: number) => void): void;
  /** Resolves after the server's first write (the `aep stream open` comment). */
  opened: Promise<void>;
  close(): void;
}

export async function openSse(baseUrl: string, token: string, query: Record<string, string>): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/stream?${new URLSearchParams(query).toString()}`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (response.status !== 200 || response.body === null) throw new Error(`GET /stream answered ${response.status}: ${await response.text()}`);
  const listeners: Array<(event: Frame, atMs: number) => void> = [];
  let markOpened: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    markOpened = resolve;
  });
  // Each message is timed at the arrival of the chunk that completed it.
  void readSse(response.body, {
    onChunk: () => markOpened(),
    onMessage: ({ data }, atMs) => {
      if (data === '') return;
      const event = JSON.parse(data) as Frame;
      for (const listener of listeners) listener(event, atMs);
    },
  }).catch(() => {
    // Aborted by close().
  });
  return { status: response.status, onMessage: (listener) => listeners.push(listener), opened, close: () => controller.abort() };
}

export async function postEvents(baseUrl: string, token: string, body: string, contentType: 'application/json' | 'application/x-ndjson'): Promise<void> {
  const response = await fetch(`${baseUrl}/events`, {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: `Bearer ${token}`, 'aep-version': '0.1' },
    body,
  });
  const text = await response.text();
  if (response.status !== 202) throw new Error(`POST /events answered ${response.status}: ${text.slice(0, 500)}`);
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
/**
 * Runs each key's items one after another, in order, at most `concurrency` in flight over all
 * keys, the keys taken round-robin (one item of a key, then the key goes to the back): the
 * posting discipline fan-out's pool keeps (`src/relay/fanout/delivery-pool.ts`: each connection's
 * deliveries in order, one in flight per connection), with nothing else of the relay in it.
 * A lane leaves only when no key is ready, and then every key left is in flight on a lane of its own.
 */
export async function inKeyOrder<T>(queues: ReadonlyMap<string, readonly T[]>, concurrency: number, work: (key: string, item: T) => Promise<void>): Promise<void> {
  const ready = [...queues.keys()].filter((key) => (queues.get(key)?.length ?? 0) > 0);
  const cursors = new Map(ready.map((key) => [key, 0]));
  let head = 0;
  const lane = async () => {
    while (head < ready.length) {
      const key = ready[head] as string;
      head += 1;
      const items = queues.get(key) as readonly T[];
      const index = cursors.get(key) as number;
      await work(key, items[index] as T);
      if (index + 1 < items.length) {
        cursors.set(key, index + 1);
        ready.push(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), ready.length) }, lane));
}

export async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
}
