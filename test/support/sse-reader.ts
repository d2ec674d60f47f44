/**
 * Reads a Server-Sent Events body (AEP-0003 §3.3) with `eventsource-parser`, handing each
 * message and comment to the caller together with the time its chunk arrived
 * (`performance.now()`), so the bench can time deliveries. Shared by the test SSE client and
 * the bench; it imports nothing from vitest, so the bench can run it outside a test.
 */
import { createParser } from 'eventsource-parser';

export interface SseMessage {
  /** The `event:` field; `message` when the server sent none (the SSE default). */
  event: string;
  data: string;
  id?: string;
}

export interface SseCallbacks {
  onMessage(message: SseMessage, atMs: number): void;
  onComment?(text: string, atMs: number): void;
  /** Called for every chunk read, before it is parsed. */
  onChunk?(atMs: number): void;
}

/** Resolves when the server ends the body; rejects if reading fails (e.g. aborted by the caller). */
export async function readSse(body: ReadableStream<Uint8Array>, callbacks: SseCallbacks): Promise<void> {
  // Every message and comment a chunk completes is dispatched synchronously inside `feed`,
  // so they all carry that chunk's arrival time.
  let chunkAtMs = 0;
  const parser = createParser({
    onEvent: ({ event, data, id }) => callbacks.onMessage({ event: event ?? 'message', data, ...(id === undefined ? {} : { id }) }, chunkAtMs),
    onComment: (text) => callbacks.onComment?.(text.trim(), chunkAtMs),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    chunkAtMs = performance.now();
    callbacks.onChunk?.(chunkAtMs);
    parser.feed(decoder.decode(value, { stream: true }));
  }
}
