/**
 * The bridges' live lane: the consumer of the events table's stream (AEP-0005 §3.5: an
 * ordinary consumer, never inside live fan-out, so a slow collector never delays a
 * dashboard). A stream batch is shared by every tenant in it, so no sink may hold it: all
 * tenants and sinks of the batch are sent to at once, each request gets one attempt within the
 * batch's live budget (`AEP_BRIDGE_LIVE_BUDGET_MS`), and whatever is not accepted in it leaves
 * the lane as a retry letter in the tenant's letter store, with a wake-up for the sink-retry
 * worker (`retry-lane.ts`), which makes the remaining attempts with the full timeout and
 * backoff. A sink whose live attempt just failed is skipped for a while (`sink-circuit.ts`).
 *
 * Delivery is at-least-once: a batch that fails before every sink is done (sink settings or
 * the letter store cannot be reached) is retried whole by the stream mapping, and a sink that
 * already had it receives it again. Receivers dedupe on `(source, id)` (AEP-0001 §7.4).
 */
import { parseStored } from '../domain/delivery-text.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { StoredSink } from './bridge-sinks-port.ts';
import type { DeadLettersPort } from '../ports/dead-letters.ts';
import type { SinkRetryQueuePort } from '../ports/sink-retry-queue.ts';
import { backoffSeconds } from './retry-backoff.ts';
import type { RetryPolicy } from './retry-backoff.ts';
import { attemptSink } from './sink-attempt.ts';
import type { AttemptDeps, Undelivered } from './sink-attempt.ts';
import type { SinkCircuits } from './sink-circuit.ts';
import type { OutboundEvent } from './sink-requests.ts';

export interface BridgeDeps extends AttemptDeps {
  deadLetters: DeadLettersPort;
  retryQueue: SinkRetryQueuePort;
  circuits: SinkCircuits;
  retry: RetryPolicy;
  /** The live lane's time for a whole stream batch. */
  liveBudgetMs: number;
  /** The retry lane's longest wait for one answer. */
  requestTimeoutMs: number;
  /** How long a retry attempt holds its letter (the retry function's timeout). */
  leaseMs: number;
}

export interface SinkDeliveryReport {
  tenant: string;
  sink: string;
  kind: string;
  /** Requests sent. */
  requests: number;
  delivered: number;
  /** Events handed to the retry lane. */
  retrying: number;
  /** Events dead-lettered (refused for good). */
  parked: number;
}

/** Delivers the new events of a stream batch to their tenants' sinks. Throws only when the batch must be retried. */
export async function deliverToBridges(deps: BridgeDeps, deliverables: readonly Deliverable[]): Promise<SinkDeliveryReport[]> {
  const deadlineMs = deps.now() + deps.liveBudgetMs;
  const byTenant = new Map<string, OutboundEvent[]>();
  for (const deliverable of deliverables) {
    // A redelivery marker is a duplicate the sinks already had with its first storing.
    if (deliverable.kind !== 'event') continue;
    const events = byTenant.get(deliverable.tenant);
    const outbound = { raw: deliverable.raw, event: deliverable.event };
    if (events === undefined) byTenant.set(deliverable.tenant, [outbound]);
    else events.push(outbound);
  }
  // Every tenant runs to its end even when another's fails, so a retried batch repeats as
  // little as it can; then the failure retries the batch.
  const settled = await Promise.allSettled(
    [...byTenant].map(async ([tenant, events]) => {
      const sinks = await deps.sinks.getSinks(tenant);
      return Promise.all(sinks.map((sink) => deliverLive(deps, tenant, sink, events, deadlineMs)));
    }),
  );
  const reports: SinkDeliveryReport[] = [];
  for (const result of settled) {
    if (result.status === 'rejected') throw result.reason;
    reports.push(...result.value);
  }
  return reports;
}

async function deliverLive(deps: BridgeDeps, tenant: string, sink: StoredSink, events: readonly OutboundEvent[], deadlineMs: number): Promise<SinkDeliveryReport> {
  const name = sink.settings.name;
  const circuitOpen = deps.circuits.isOpen(tenant, name);
  const attempt = await attemptSink(deps, tenant, sink, events, {
    timeoutMs: deps.liveBudgetMs,
    deadlineMs,
    ...(circuitOpen ? { skipReason: 'not tried live: the sink failed recently' } : {}),
  });
  if (attempt.failedRetryably) deps.circuits.failed(tenant, name);
  else if (attempt.requests > 0) deps.circuits.succeeded(tenant, name);
  const failedAtMs = deps.now();
  const report: SinkDeliveryReport = { tenant, sink: name, kind: sink.settings.kind, requests: attempt.requests, delivered: attempt.delivered, retrying: 0, parked: 0 };
  for (const refused of attempt.refused) {
    await deps.deadLetters.park(tenant, { sink: name, reason: refused.reason, failedAtMs, events: raws(refused), attempts: 1 });
    report.parked += refused.events.length;
  }
  const handed = await handToRetryLane(deps, tenant, name, attempt.retryable, attempt.requests > 0 ? 1 : 0);
  report.retrying = handed.retrying;
  report.parked += handed.parked;
  return report;
}

/** Stores what the live lane did not deliver as retry letters and wakes the worker for them. */
async function handToRetryLane(deps: BridgeDeps, tenant: string, sink: string, undelivered: readonly Undelivered[], attemptsMade: number): Promise<{ retrying: number; parked: number }> {
  const counts = { retrying: 0, parked: 0 };
  if (undelivered.length === 0) return counts;
  const failedAtMs = deps.now();
  const delaySeconds = backoffSeconds(deps.retry, attemptsMade);
  const wakeUps = [];
  for (const part of undelivered) {
    // Attempts already spent: a letter whose budget is one attempt is dead at once.
    const dead = attemptsMade >= deps.retry.attempts;
    const ids = await deps.deadLetters.park(tenant, {
      sink,
      reason: part.reason,
      failedAtMs,
      events: raws(part),
      attempts: attemptsMade,
      ...(dead ? {} : { dueAtMs: failedAtMs + delaySeconds * 1000 }),
    });
    if (dead) counts.parked += part.events.length;
    else {
      wakeUps.push(...ids.map((letter) => ({ tenant, letter })));
      counts.retrying += part.events.length;
    }
  }
  if (wakeUps.length > 0) await deps.retryQueue.wake(wakeUps, delaySeconds);
  return counts;
}

const raws = (part: Undelivered): string[] => part.events.map((outbound) => outbound.raw);

/** The stored texts of a letter, as outbound events again (unreadable ones are skipped). */
export function outboundOf(raws: readonly string[]): OutboundEvent[] {
  const events: OutboundEvent[] = [];
  for (const raw of raws) {
    const event = parseStored(raw);
    if (event !== undefined) events.push({ raw, event });
  }
  return events;
}
