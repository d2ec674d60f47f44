/**
 * Sends one Web Push message: the adapter encrypts the payload to the subscription's keys
 * (RFC 8291) and signs the request with the relay's VAPID key (RFC 8292) through the `web-push`
 * library, then POSTs it to the push service within `timeoutMs`.
 */
import type { PushSubscriptionRecord } from './push-subscription.ts';

export interface PushRequest {
  subscription: Pick<PushSubscriptionRecord, 'endpoint' | 'keys' | 'vapidKey'>;
  payload: string;
  topic: string;
  urgency: 'normal' | 'high';
  ttlSeconds: number;
}

/**
 * `gone`: the push service answered 404 or 410, the subscription is dead for good (RFC 8030
 * §7.3) and is removed; `retryable`: no answer, 408, 429 or 5xx.
 */
export type PushOutcome = { ok: true } | { ok: false; gone: true; reason: string } | { ok: false; gone?: false; retryable: boolean; reason: string };

export interface PushTransport {
  /** The VAPID public keys the relay signs with, current first (browsers subscribe under the first). */
  vapidKeys(): readonly string[];
  send(request: PushRequest, timeoutMs: number): Promise<PushOutcome>;
}
