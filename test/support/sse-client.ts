/**
 * A Server-Sent Events test client over fetch: parses messages (`event`, `data`, `id`) and
 * comments as they stream in, in arrival order (parsing by `readSse`, shared with the bench).
 */
import { inject } from 'vitest';
import { readSse } from './sse-reader.ts';

export type SseItem = { kind: 'message'; event: string; data: string; id?: string; json: Record<string, any> } | { kind: 'comment'; text: string };

export interface SseStream {
  status: number;
  headers: Headers;
  items: SseItem[];
  messages(): Array<Extract<SseItem, { kind: 'message' }>>;
  comments(): string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  waitFor(predicate: (items: SseItem[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
  /** The body of a refused (non-200) response. */
  body?: unknown;
}

export async function openStream(query: Record<string, string>, options: { token?: string; lastEventId?: string; tokenInQuery?: boolean; baseUrl?: string } = {}): Promise<SseStream> {
  const token = options.token ?? inject('devToken');
  const params = new URLSearchParams(query);
  if (options.tokenInQuery) params.set('access_token', token);
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (!options.tokenInQuery && token !== '') headers.authorization = `Bearer ${token}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const response = await fetch(`${options.baseUrl ?? inject('baseUrl')}/stream?${params.toString()}`, { headers, signal: controller.signal });
  const items: SseItem[] = [];
  if (response.status !== 200) {
    const body: unknown = await response.json();
    return { status: response.status, headers: response.headers, items, messages: () => [], comments: () => [], ended: Promise.resolve(), waitFor: async () => undefined, close: () => undefined, body };
  }
  const ended = readSse(response.body!, {
    onMessage: ({ event, data, id }) => items.push({ kind: 'message', event, data, ...(id === undefined ? {} : { id }), json: JSON.parse(data) as Record<string, any> }),
    onComment: (text) => items.push({ kind: 'comment', text }),
  }).catch(() => {
    // aborted by close()
  });
  const messages = () => items.filter((item): item is Extract<SseItem, { kind: 'message' }> => item.kind === 'message');
  return {
    status: response.status,
    headers: response.headers,
    items,
    messages,
    comments: () => items.filter((item): item is Extract<SseItem, { kind: 'comment' }> => item.kind === 'comment').map((item) => item.text),
    ended,
    waitFor: async (predicate, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(items)) {
        if (Date.now() > deadline) throw new Error(`SSE condition not met within ${timeoutMs} ms; received ${JSON.stringify(items).slice(0, 3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => controller.abort(),
  };
}
