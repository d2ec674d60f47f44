/** The bench's own relay clients: WebSocket and SSE consumers, HTTP posting, tenants written into DynamoDB Local, waiting for the stack to settle. */
import { randomBytes } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import WebSocket from 'ws';
import { SCOPES } from '../src/auth/scopes.ts';
import { hashTokenSecret, mintTokenSecret } from '../src/auth/token-secret.ts';
import { ulidFactory } from '../src/protocol/ulid.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { tenantTableStores } from '../src/store/tenant-table.ts';
import { localTableNames } from '../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../local/local-credentials.ts';
import type { RunningStack } from '../local/stack.ts';
import type { StackUsage } from '../local/usage.ts';

export type Frame = Record<string, any>;

export const mintId = ulidFactory(Date.now, (length) => randomBytes(length));
export const uniqueName = (prefix: string) => `${prefix}-${mintId().slice(-10).toLowerCase()}`;
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const localDynamo = (endpoint: string) => createDynamoClient({ region: 'us-east-1', endpoint, credentials: LOCAL_CREDENTIALS });

/** Polls `condition` every `everyMs` until it holds; throws `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: () => string, timeoutMs = 60_000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await sleep(everyMs);
  }
}

/** Waits until no handler (the stream function apart) runs and the counters have not moved for `quietMs`. */
export async function settle(stack: RunningStack, quietMs = 300, timeoutMs = 60_000): Promise<void> {
  const busy = (usage: StackUsage) => Object.entries(usage.functions).flatMap(([name, f]) => (name === 'stream' ? [] : [f.invocations, f.completed, f.dynamoCalls, f.invocations - f.completed]));
  const signature = (usage: StackUsage) => JSON.stringify([busy(usage), usage.postToConnection.calls, usage.fanoutRecords]);
  const inFlight = (usage: StackUsage) => Object.entries(usage.functions).some(([name, f]) => name !== 'stream' && f.invocations > f.completed);
  const deadline = Date.now() + timeoutMs;
  let last = signature(stack.usage());
  let quietSince = Date.now();
  for (;;) {
    await sleep(25);
    const usage = stack.usage();
    const now = signature(usage);
    if (now !== last || inFlight(usage)) [last, quietSince] = [now, Date.now()];
    else if (Date.now() - quietSince >= quietMs) return;
    if (Date.now() > deadline) throw new Error('the stack did not settle');
  }
}

/** A tenant of its own (so each scenario reads only its own subscriptions) with a token holding every scope. */
export async function createTenant(dynamoEndpoint: string, tenant: string): Promise<string> {
  const client = localDynamo(dynamoEndpoint);
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

  static async consumer(baseUrl: string, token: string, hello: Frame, subscribe?: Frame): Promise<BenchSocket> {
    const client = await BenchSocket.open(baseUrl, token);
    const ask = async (frame: Frame, answer: string, matches: (reply: Frame) => boolean) => {
      const reply = client.next((one) => (one.type === answer || one.type === 'error') && matches(one));
      client.send(frame);
      if ((await reply).type !== answer) throw new Error(`${String(frame.type)} refused: ${JSON.stringify(await reply)}`);
    };
    await ask({ type: 'hello', versions: ['0.1'], identity: {}, capabilities: {}, ...hello }, 'hello', () => true);
    if (subscribe !== undefined) await ask({ type: 'subscribe', ...subscribe }, 'subscribed', (reply) => reply.id === subscribe.id);
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

/** An open `GET /stream`: each message's data, parsed, with the arrival time of the chunk that completed it. */
export async function openSse(baseUrl: string, token: string, query: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/stream?${new URLSearchParams(query).toString()}`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` }, signal: controller.signal });
  if (response.status !== 200 || response.body === null) throw new Error(`GET /stream answered ${response.status}: ${await response.text()}`);
  const listeners: Array<(event: Frame, atMs: number) => void> = [];
  let markOpened: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  let chunkAtMs = 0;
  const parser = createParser({
    onEvent: ({ data }) => {
      if (data === '') return;
      const event = JSON.parse(data) as Frame;
      for (const listener of listeners) listener(event, chunkAtMs);
    },
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      chunkAtMs = performance.now();
      markOpened();
      parser.feed(decoder.decode(value, { stream: true }));
    }
  })().catch(() => undefined); // aborted by close()
  return { onMessage: (listener: (event: Frame, atMs: number) => void) => listeners.push(listener), opened, close: () => controller.abort() };
}

export async function postEvents(baseUrl: string, token: string, body: string, contentType: 'application/json' | 'application/x-ndjson'): Promise<void> {
  const response = await fetch(`${baseUrl}/events`, { method: 'POST', headers: { 'content-type': contentType, authorization: `Bearer ${token}`, 'aep-version': '0.1' }, body });
  const text = await response.text();
  if (response.status !== 202) throw new Error(`POST /events answered ${response.status}: ${text.slice(0, 500)}`);
}

/** `events` as NDJSON batches of `batch`, one POST after another. */
export async function postBatches(baseUrl: string, token: string, events: ReadonlyArray<Record<string, unknown>>, batch = 100): Promise<void> {
  for (let offset = 0; offset < events.length; offset += batch) {
    await postEvents(baseUrl, token, `${events.slice(offset, offset + batch).map((event) => JSON.stringify(event)).join('\n')}\n`, 'application/x-ndjson');
  }
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}
