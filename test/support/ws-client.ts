/**
 * A WebSocket test client on the `ws` package: records every frame it receives and lets a
 * test wait for the next one matching a predicate.
 */
import WebSocket from 'ws';
import { inject } from 'vitest';

export type Frame = Record<string, any>;

export interface TestSocket {
  socket: WebSocket;
  frames: Frame[];
  send(message: unknown): void;
  sendRaw(text: string | Buffer, options?: { binary?: boolean }): void;
  /** Resolves with the first received frame (already received or future) matching `predicate`, after index `from`. */
  next(predicate: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  /** Frames received so far that match. */
  all(predicate: (frame: Frame) => boolean): Frame[];
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export interface OpenSocketOptions {
  token?: string;
  tokenInQuery?: boolean;
  /** Another stack than the shared one (tests that start their own). */
  baseUrl?: string;
  /** Extra handshake headers (e.g. a User-Agent a fault rule matches). */
  headers?: Record<string, string>;
}

export async function openSocket(options: OpenSocketOptions = {}): Promise<TestSocket> {
  const token = options.token ?? inject('devToken');
  const base = (options.baseUrl ?? inject('baseUrl')).replace(/^http/, 'ws');
  const url = options.tokenInQuery ? `${base}/socket?access_token=${encodeURIComponent(token)}` : `${base}/socket`;
  const socket = new WebSocket(url, { headers: { ...options.headers, ...(options.tokenInQuery || token === '' ? {} : { authorization: `Bearer ${token}` }) } });
  const frames: Frame[] = [];
  const waiters: Array<{ predicate: (frame: Frame) => boolean; resolve: (frame: Frame) => void }> = [];
  socket.on('message', (data: WebSocket.RawData) => {
    let frame: Frame;
    try {
      frame = JSON.parse(data.toString()) as Frame;
    } catch {
      frame = { unparsable: data.toString() };
    }
    frames.push(frame);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(frame)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake refused: ${response.statusCode}`)));
  });
  return {
    socket,
    frames,
    send: (message) => socket.send(JSON.stringify(message)),
    sendRaw: (text, sendOptions) => socket.send(text, { binary: sendOptions?.binary ?? false }),
    next: (predicate, timeoutMs = 10_000) => {
      const existing = frames.find(predicate);
      if (existing !== undefined) return Promise.resolve(existing);
      return new Promise<Frame>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(frames).slice(0, 2000)}`)), timeoutMs);
        waiters.push({
          predicate,
          resolve: (frame) => {
            clearTimeout(timer);
            resolve(frame);
          },
        });
      });
    },
    all: (predicate) => frames.filter(predicate),
    closed,
    close: async () => {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close();
      await closed;
    },
  };
}

/** Hellos refused with `unavailable` that a test client sends again, each on a new connection. */
const HELLO_ATTEMPTS = 5;

/**
 * Opens a socket and completes the hello exchange. A relay too busy to take the hello answers
 * `unavailable` and ends the connection, which asks the client to connect and send it again
 * (AEP-0003 §3, §6.5): so does this client, as any real one would, on a loaded machine.
 */
export async function helloSocket(hello: Record<string, unknown> = {}, options: OpenSocketOptions = {}): Promise<TestSocket> {
  for (let attempt = 1; ; attempt += 1) {
    const client = await openSocket(options);
    client.send({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {}, ...hello });
    const answer = await client.next((frame) => frame.type === 'hello' || (frame.type === 'error' && frame.code === 'unavailable'));
    if (answer.type === 'hello') return client;
    await client.close();
    if (attempt >= HELLO_ATTEMPTS) throw new Error(`the relay answered ${HELLO_ATTEMPTS} hellos with unavailable: ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

export const isType = (type: string) => (frame: Frame) => frame.type === type;

/** Waits until `count` frames match, or fails with what arrived. */
export async function waitForCount(client: TestSocket, predicate: (frame: Frame) => boolean, count: number, timeoutMs = 10_000): Promise<Frame[]> {
  const deadline = Date.now() + timeoutMs;
  while (client.all(predicate).length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} matching frames, got ${client.all(predicate).length}: ${JSON.stringify(client.frames).slice(0, 3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return client.all(predicate);
}

/**
 * Waits until the relay's roster (AEP-0003 §4.1) shows at least `count` live claims of `session`:
 * fan-out records a claim from the claimant's first sequenced event it meets, before delivering it.
 */
export async function untilClaimed(options: OpenSocketOptions, session: string, count = 1, timeoutMs = 20_000): Promise<void> {
  const watcher = await helloSocket({ role: 'consumer' }, options);
  try {
    const deadline = Date.now() + timeoutMs;
    for (let round = 0; ; round += 1) {
      const id = `claims-${round}`;
      watcher.send({ type: 'roster', id });
      const reply = await watcher.next((frame) => frame.type === 'roster' && frame.id === id);
      const claims = ((reply.entries as Array<{ session?: unknown }> | undefined) ?? []).filter((entry) => entry.session === session).length;
      if (claims >= count) return;
      if (Date.now() > deadline) throw new Error(`the roster shows ${claims} claims of ${session}, not ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await watcher.close();
  }
}
