/**
 * One attempt of one sink request. Retries are the retry lane's (`retry-lane.ts`): a request
 * is never retried in place, so no sink holds a stream batch longer than its live budget.
 * EventBridge entries that failed alone are what is left of the request; a refusal that no
 * retry can change (a 4xx other than 408/429, a disallowed address) is `retryable: false`.
 */
import type { HttpDelivery, SinkTransport } from './sink-transport-port.ts';
import type { OutboundEvent, SinkRequest } from './sink-requests.ts';

export interface SendContext {
  transport: SinkTransport;
  /** Headers of an HTTP attempt, made per attempt (a webhook signature carries its time). */
  headersFor: (body: string) => Record<string, string>;
}

export type SendResult = { ok: true } | { ok: false; undelivered: OutboundEvent[]; retryable: boolean; reason: string };

export async function sendOnce(request: SinkRequest, context: SendContext, timeoutMs: number): Promise<SendResult> {
  if (request.transport === 'http') {
    const delivery: HttpDelivery = { url: request.url, headers: { ...context.headersFor(request.body), 'content-type': request.contentType }, body: request.body };
    const outcome = await context.transport.postHttp(delivery, timeoutMs);
    return outcome.ok ? outcome : { ok: false, undelivered: request.events, retryable: outcome.retryable, reason: outcome.reason };
  }
  const outcome = await context.transport.putEvents(request.busArn, request.entries, timeoutMs);
  if (outcome.ok) return outcome;
  if ('failedEntries' in outcome) return { ok: false, undelivered: eventsAt(request.events, outcome.failedEntries), retryable: true, reason: outcome.reason };
  return { ok: false, undelivered: request.events, retryable: outcome.retryable, reason: outcome.reason };
}

function eventsAt(events: readonly OutboundEvent[], indexes: readonly number[]): OutboundEvent[] {
  return indexes.flatMap((index) => {
    const event = events[index];
    return event === undefined ? [] : [event];
  });
}
