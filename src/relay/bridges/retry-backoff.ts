/**
 * When a retry letter's next attempt is due: exponential backoff from the retry policy, in
 * the whole seconds an SQS delay takes (rounded up, at most SQS's 900 s).
 */
import { MAX_WAKE_UP_DELAY_SECONDS } from '../ports/sink-retry-queue.ts';

export interface RetryPolicy {
  /** Attempts in all, the live one included. */
  attempts: number;
  /** Wait after the first attempt; doubled after each later one, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Seconds to wait after `attemptsMade` attempts (a request its open circuit kept from the live lane waits as after one). */
export function backoffSeconds(policy: RetryPolicy, attemptsMade: number): number {
  const ms = Math.min(policy.baseDelayMs * 2 ** (Math.max(1, attemptsMade) - 1), policy.maxDelayMs);
  return Math.min(Math.max(1, Math.ceil(ms / 1000)), MAX_WAKE_UP_DELAY_SECONDS);
}
