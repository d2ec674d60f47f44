/**
 * The push lane, live: Web Push notifications for attention requests (AEP-0002 §7), run by the
 * bridges' stream consumer beside (never after) its sinks, with the sinks' guarantees. A
 * stream batch is shared by every tenant in it, so all tenants and subscriptions of the batch
 * are sent to at once, each message gets one attempt within the batch's live budget, and what
 * is not accepted in it leaves as a retry letter (the bridges' letter store, named
 * `push:{subscription}`) with a wake-up for the sink-retry worker (`push-retry.ts`). A
 * subscription whose live attempt just failed is skipped for a while (a circuit of its own). So a
 * push endpoint that never answers costs its tenant's batch at most the live budget once, and
 * every other tenant nothing: their messages were sent at the same moment as its own.
 *
 * A request goes to the subscriptions whose filter it matches; the note of who got it lets its
 * follow-up (answered, resolved, timed out) reach exactly them, with the same tag.
 */
import type { Deliverable } from '../domain/deliverable.ts';
import type { DeadLettersPort } from '../ports/dead-letters.ts';
import type { SinkRetryQueuePort, SinkRetryWakeUp } from '../ports/sink-retry-queue.ts';
import { backoffSeconds } from '../bridges/retry-backoff.ts';
import type { RetryPolicy } from '../bridges/retry-backoff.ts';
import type { SinkCircuits } from '../bridges/sink-circuit.ts';
import type { OutboundEvent } from '../bridges/sink-requests.ts';
import { ATTENTION_REQUESTED, FOLLOW_UP_TYPES, requestOf } from './attention-notification.ts';
import { attemptPush } from './push-attempt.ts';
import type { PushAttemptDeps } from './push-attempt.ts';
import { requestMatcher } from './push-match.ts';
import { pushLetterSink } from './push-subscription.ts';
import type { PushSubscriptionRecord } from './push-subscription.ts';

export interface PushDeps extends PushAttemptDeps {
  deadLetters: DeadLettersPort;
  retryQueue: SinkRetryQueuePort;
  /** The push lane's own circuits (keyed by subscription id). */
  circuits: SinkCircuits;
  retry: RetryPolicy;
  liveBudgetMs: number;
  requestTimeoutMs: number;
  leaseMs: number;
  /** How long the note of who was sent a request lasts (its follow-up must come within it). */
  notifiedLifetimeMs: number;
}

export interface PushDeliveryReport {
  tenant: string;
  subscription: string;
  sent: number;
  retrying: number;
  dropped: number;
  gone: boolean;
}

const isAttention = (type: string) => type === ATTENTION_REQUESTED || FOLLOW_UP_TYPES.has(type);

/** Sends the attention events of a stream batch to their tenants' push subscriptions. Throws only when the batch must be retried. */
export async function deliverPushes(deps: PushDeps, deliverables: readonly Deliverable[]): Promise<PushDeliveryReport[]> {
  const deadlineMs = deps.now() + deps.liveBudgetMs;
  const byTenant = new Map<string, OutboundEvent[]>();
  for (const deliverable of deliverables) {
    if (deliverable.kind !== 'event' || !isAttention(deliverable.event.type)) continue;
    const events = byTenant.get(deliverable.tenant) ?? [];
    events.push({ raw: deliverable.raw, event: deliverable.event });
    byTenant.set(deliverable.tenant, events);
  }
  const settled = await Promise.allSettled([...byTenant].map(([tenant, events]) => deliverTenant(deps, tenant, events, deadlineMs)));
  const reports: PushDeliveryReport[] = [];
  for (const result of settled) {
    if (result.status === 'rejected') throw result.reason;
    reports.push(...result.value);
  }
  return reports;
}

async function deliverTenant(deps: PushDeps, tenant: string, events: readonly OutboundEvent[], deadlineMs: number): Promise<PushDeliveryReport[]> {
  const subscriptions = await deps.subscriptions.list(tenant);
  if (subscriptions.length === 0) return [];
  const queues = await planQueues(deps, tenant, subscriptions, events);
  return Promise.all([...queues].map(([subscription, queued]) => deliverLive(deps, tenant, subscription, queued, deadlineMs)));
}

/** Each subscription's messages in stream order; requests noted before anything is sent. */
async function planQueues(deps: PushDeps, tenant: string, subscriptions: readonly PushSubscriptionRecord[], events: readonly OutboundEvent[]): Promise<Map<PushSubscriptionRecord, OutboundEvent[]>> {
  const byId = new Map(subscriptions.map((subscription) => [subscription.id, subscription]));
  const matchers = subscriptions.map((subscription) => ({ subscription, matches: requestMatcher(subscription) }));
  const sentInBatch = new Map<string, string[]>();
  const queues = new Map<PushSubscriptionRecord, OutboundEvent[]>();
  const enqueue = (subscription: PushSubscriptionRecord, outbound: OutboundEvent) => queues.set(subscription, [...(queues.get(subscription) ?? []), outbound]);
  for (const outbound of events) {
    const request = requestOf(outbound.event);
    if (request === undefined) continue;
    const key = `${request.session}\u0000${request.id}`;
    if (outbound.event.type === ATTENTION_REQUESTED) {
      const matching = matchers.filter(({ matches }) => matches(outbound.event)).map(({ subscription }) => subscription);
      if (matching.length === 0) continue;
      const ids = matching.map((subscription) => subscription.id);
      // Noted first: a follow-up handled by another batch must find who may show the request.
      await deps.subscriptions.markNotified(tenant, request.session, request.id, ids, deps.now() + deps.notifiedLifetimeMs);
      sentInBatch.set(key, ids);
      for (const subscription of matching) enqueue(subscription, outbound);
    } else {
      const ids = sentInBatch.get(key) ?? (await deps.subscriptions.notified(tenant, request.session, request.id));
      for (const id of new Set(ids)) {
        const subscription = byId.get(id);
        if (subscription !== undefined) enqueue(subscription, outbound);
      }
    }
  }
  return queues;
}

async function deliverLive(deps: PushDeps, tenant: string, subscription: PushSubscriptionRecord, events: readonly OutboundEvent[], deadlineMs: number): Promise<PushDeliveryReport> {
  const circuitOpen = deps.circuits.isOpen(tenant, subscription.id);
  const attempt = await attemptPush(deps, tenant, subscription, events, {
    timeoutMs: deps.liveBudgetMs,
    deadlineMs,
    ...(circuitOpen ? { skipReason: 'not tried live: the push service failed recently' } : {}),
  });
  if (attempt.failedRetryably) deps.circuits.failed(tenant, subscription.id);
  else if (attempt.sent > 0) deps.circuits.succeeded(tenant, subscription.id);
  const report: PushDeliveryReport = { tenant, subscription: subscription.id, sent: attempt.sent, retrying: 0, dropped: attempt.dropped, gone: attempt.gone };
  if (attempt.retryable.length === 0) return report;
  const attemptsMade = circuitOpen ? 0 : 1;
  if (attemptsMade >= deps.retry.attempts) return { ...report, dropped: report.dropped + attempt.retryable.length };
  const failedAtMs = deps.now();
  const delaySeconds = backoffSeconds(deps.retry, attemptsMade);
  const ids = await deps.deadLetters.park(tenant, {
    sink: pushLetterSink(subscription.id),
    reason: attempt.reason ?? 'not delivered',
    failedAtMs,
    events: attempt.retryable.map((outbound) => outbound.raw),
    attempts: attemptsMade,
    dueAtMs: failedAtMs + delaySeconds * 1000,
  });
  const wakeUps: SinkRetryWakeUp[] = ids.map((letter) => ({ tenant, letter, lane: 'push' }));
  await deps.retryQueue.wake(wakeUps, delaySeconds);
  return { ...report, retrying: attempt.retryable.length };
}
