/** Sends bridge requests: HTTP posts (webhooks, OTLP/HTTP) and EventBridge PutEvents calls. */
import type { EventBridgeEntry } from './sink-requests.ts';

export interface HttpDelivery {
  url: string;
  headers: Readonly<Record<string, string>>;
  /** Text is sent as UTF-8; bytes as they are (a Web Push message's encrypted body). */
  body: string | Uint8Array;
}

/**
 * `retryable`: worth another attempt (no answer, 408, 429, 5xx, throttling); otherwise the
 * receiver refused the content and only a changed sink or receiver helps (dead-lettered at once).
 */
export type SendOutcome = { ok: true } | { ok: false; retryable: boolean; reason: string; /** The HTTP status, when the receiver answered. */ status?: number };

/** PutEvents answers per entry; `failedEntries` are the indexes to send again. */
export type PutEventsOutcome = SendOutcome | { ok: false; retryable: true; reason: string; failedEntries: number[] };

/** Each call is one attempt, abandoned (a retryable failure) after `timeoutMs`. */
export interface SinkTransport {
  postHttp(delivery: HttpDelivery, timeoutMs: number): Promise<SendOutcome>;
  putEvents(busArn: string, entries: readonly EventBridgeEntry[], timeoutMs: number): Promise<PutEventsOutcome>;
}
