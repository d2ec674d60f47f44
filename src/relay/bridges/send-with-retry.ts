/**
 * One sink request, sent until it is accepted or the retry budget is spent: exponential
 * backoff between attempts, EventBridge entries that failed resent alone, and a refusal that
 * no retry can change (a 4xx other than 408/429) ending the attempts at once.
 */
import type { HttpDelivery, SinkTransport } from '../ports/sink-transport.ts';
import type { EventBridgeEntry, OutboundEvent, SinkRequest } from './sink-requests.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled for each later one, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface SendContext {
  transport: SinkTransport;
  retry: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  /** Headers of an HTTP attempt, made per attempt (a webhook signature carries its time). */
  headersFor: (body: string) => Record<string, string>;
}

/** What is still undelivered after the budget (empty when all arrived), and why. */
export interface SendResult {
  undelivered: OutboundEvent[];
  reason?: string;
  attempts: number;
}

export async function sendWithRetry(request: SinkRequest, context: SendContext): Promise<SendResult> {
  let pending = request;
  let reason = '';
  for (let attempt = 1; attempt <= context.retry.attempts; attempt += 1) {
    if (attempt > 1) await context.sleep(Math.min(context.retry.baseDelayMs * 2 ** (attempt - 2), context.retry.maxDelayMs));
    if (pending.transport === 'http') {
      const delivery: HttpDelivery = { url: pending.url, headers: { ...context.headersFor(pending.body), 'content-type': pending.contentType }, body: pending.body };
      const outcome = await context.transport.postHttp(delivery);
      if (outcome.ok) return { undelivered: [], attempts: attempt };
      reason = outcome.reason;
      if (!outcome.retryable) return { undelivered: pending.events, reason, attempts: attempt };
      continue;
    }
    const outcome = await context.transport.putEvents(pending.busArn, pending.entries);
    if (outcome.ok) return { undelivered: [], attempts: attempt };
    reason = outcome.reason;
    if (!outcome.retryable) return { undelivered: pending.events, reason, attempts: attempt };
    if ('failedEntries' in outcome) pending = onlyEntries(pending, outcome.failedEntries);
  }
  return { undelivered: pending.events, reason, attempts: context.retry.attempts };
}

function onlyEntries(request: Extract<SinkRequest, { transport: 'eventbridge' }>, indexes: readonly number[]): SinkRequest {
  const keep = new Set(indexes);
  const entries: EventBridgeEntry[] = [];
  const events: OutboundEvent[] = [];
  request.entries.forEach((entry, index) => {
    if (!keep.has(index)) return;
    entries.push(entry);
    const event = request.events[index];
    if (event !== undefined) events.push(event);
  });
  return { ...request, entries, events };
}
