/**
 * The live tail's stream: `GET /stream` (AEP-0003 §3.3) read with fetch, so the token rides
 * the `Authorization` header rather than the URL, and every AEP type arrives (an EventSource
 * only dispatches event names it was told in advance). Pausing closes the stream; resuming
 * and reconnecting reopen it with `from` = the last position shown per session, so nothing
 * between is skipped or repeated (§7).
 */
import { createParser } from 'eventsource-parser';
import type { Filter } from '../../src/protocol/attr-match.ts';
import type { AepObject } from './attention.ts';
import { PositionBook } from './positions.ts';
import type { RelayClient } from './relay-client.ts';

export type TailState = 'connecting' | 'live' | 'paused' | 'reconnecting' | 'refused';

export interface TailedEvent {
  /** The `data:` line exactly as received. */
  raw: string;
  event: AepObject;
  /** Arrival order in this tail. */
  serial: number;
}

export interface TailCallbacks {
  event(item: TailedEvent): void;
  state(state: TailState, detail?: string): void;
  /** `replay-exhausted` and `closing` comment lines the relay sent (AEP-0003 §3.3). */
  notice(text: string): void;
}

/** The relay's default limit on `from` positions (AEP_MAX_FROM); the tail keeps under it. */
const MAX_FROM_POSITIONS = 200;

export class LiveTail {
  private positions = new PositionBook();
  private controller: AbortController | undefined;
  private filter: Filter = {};
  private serial = 0;
  private generation = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: RelayClient,
    private readonly callbacks: TailCallbacks,
  ) {}

  /** Starts (or restarts) live delivery for a filter; a new filter starts from now. */
  start(filter: Filter): void {
    this.filter = filter;
    this.positions = new PositionBook();
    this.open('connecting');
  }

  pause(): void {
    this.close();
    this.callbacks.state('paused');
  }

  /** Reopens after what was shown, per session (`from`). */
  resume(): void {
    this.open('connecting');
  }

  stop(): void {
    this.close();
  }

  private close(): void {
    this.generation += 1;
    clearTimeout(this.retryTimer);
    this.controller?.abort();
    this.controller = undefined;
  }

  private open(state: TailState): void {
    this.close();
    const generation = this.generation;
    this.callbacks.state(state);
    void this.run(generation).catch(() => undefined);
  }

  private async run(generation: number): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    const params = new URLSearchParams({ filter: JSON.stringify(this.filter) });
    if (this.positions.size > 0) params.set('from', JSON.stringify(this.positions.fromParameter(MAX_FROM_POSITIONS)));
    let response: Response;
    try {
      response = await fetch(`/stream?${params.toString()}`, {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${this.client.token}` },
        signal: controller.signal,
        cache: 'no-store',
      });
    } catch {
      return this.retry(generation, 2000, 'the relay could not be reached; retrying');
    }
    if (generation !== this.generation) return;
    if (response.status !== 200 || response.body === null) {
      const body = (await response.json().catch(() => ({}))) as { error?: string; detail?: string };
      const words = `${body.error ?? `HTTP ${response.status}`}: ${body.detail ?? response.statusText}`;
      if (response.status === 429 || response.status >= 500) {
        const afterSeconds = Number(response.headers.get('retry-after') ?? '2');
        return this.retry(generation, Math.max(1, afterSeconds) * 1000, `${words}; retrying`);
      }
      this.callbacks.state('refused', streamRefusalInWords(response.status, words));
      return;
    }
    this.callbacks.state('live');
    const parser = createParser({
      onEvent: ({ data }) => {
        if (generation !== this.generation) return;
        let event: AepObject;
        try {
          event = JSON.parse(data) as AepObject;
        } catch {
          return;
        }
        this.positions.note(event);
        this.serial += 1;
        this.callbacks.event({ raw: data, event, serial: this.serial });
      },
      onComment: (comment) => {
        const text = comment.trim();
        // Only what a person should know: a resume that predates the relay's buffer, or why a
        // stream was cut. The routine end at the duration limit is resumed without a word.
        const worthTelling = /^replay-exhausted\b/.test(text) || (/^closing\b/.test(text) && !text.includes('duration limit'));
        if (generation === this.generation && worthTelling) this.callbacks.notice(text);
      },
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      // Aborted (pause, new filter) or cut: the generation check below tells which.
    }
    // The relay ends streams after a while (Lambda's duration limit); pick up where it ended.
    this.retry(generation, 250, 'reconnecting');
  }

  private retry(generation: number, delayMs: number, detail: string): void {
    if (generation !== this.generation) return;
    this.callbacks.state('reconnecting', detail);
    this.retryTimer = setTimeout(() => {
      if (generation === this.generation) this.open('reconnecting');
    }, delayMs);
  }
}

function streamRefusalInWords(status: number, words: string): string {
  if (status === 401) return `the relay did not accept the token (${words})`;
  if (status === 403) return `this token may not watch events: it needs the consume scope (${words})`;
  if (status === 400) return `the relay refused the filter (${words})`;
  return words;
}
