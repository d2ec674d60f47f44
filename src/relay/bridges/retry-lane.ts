/**
 * The sink-retry worker's use case: what the live lane could not deliver gets its remaining
 * attempts here, off the shared stream batch, each with the full request timeout. A wake-up
 * names one letter; the worker claims it (so a duplicate wake-up sends nothing twice), makes
 * one attempt, and then removes the letter (delivered), reschedules it with exponential backoff
 * and a delayed wake-up, or, its attempts spent, leaves it as a dead letter for the admin API.
 * Order of writes keeps at-least-once: what is refused for good is parked before the letter
 * changes, so a crash in between leaves a duplicate, never a loss.
 */
import type { SinkRetryWakeUp } from '../ports/sink-retry-queue.ts';
import type { BridgeDeps } from './deliver-to-sinks.ts';
import { outboundOf } from './deliver-to-sinks.ts';
import { backoffSeconds } from './retry-backoff.ts';
import { attemptSink } from './sink-attempt.ts';

export type RetryResult =
  /** Not due (a duplicate or early wake-up), already delivered, or dead: nothing to do. */
  | 'skipped'
  | 'delivered'
  | 'rescheduled'
  /** Attempts spent: now a dead letter. */
  | 'dead'
  /** Its sink was removed: kept as a dead letter. */
  | 'orphaned';

export interface RetryReport {
  tenant: string;
  letter: string;
  sink?: string;
  result: RetryResult;
  delivered: number;
  /** Events dead-lettered by this attempt. */
  parked: number;
}

export async function retryLetter(deps: BridgeDeps, wakeUp: SinkRetryWakeUp): Promise<RetryReport> {
  const { tenant, letter: id } = wakeUp;
  const now = deps.now();
  const report: RetryReport = { tenant, letter: id, result: 'skipped', delivered: 0, parked: 0 };
  const letter = await deps.deadLetters.claim(tenant, id, now, now + deps.leaseMs);
  if (letter === undefined) return report;
  report.sink = letter.sink;
  const sink = (await deps.sinks.getSinks(tenant)).find((candidate) => candidate.settings.name === letter.sink);
  if (sink === undefined) {
    await deps.deadLetters.bury(tenant, id, { events: letter.events, reason: 'the sink no longer exists', attempts: letter.attempts, failedAtMs: now });
    return { ...report, result: 'orphaned', parked: letter.events.length };
  }
  const attempt = await attemptSink(deps, tenant, sink, outboundOf(letter.events), { timeoutMs: deps.requestTimeoutMs });
  const attempts = letter.attempts + 1;
  const failedAtMs = deps.now();
  report.delivered = attempt.delivered;
  for (const refused of attempt.refused) {
    await deps.deadLetters.park(tenant, { sink: letter.sink, reason: refused.reason, failedAtMs, events: refused.events.map((event) => event.raw), attempts });
    report.parked += refused.events.length;
  }
  const left = attempt.retryable.flatMap((part) => part.events.map((event) => event.raw));
  if (left.length === 0) {
    await deps.deadLetters.remove(tenant, id);
    return { ...report, result: 'delivered' };
  }
  const lastReason = attempt.retryable.at(-1)?.reason ?? 'not delivered';
  const outcome = { events: left, reason: `${lastReason} (after ${attempts} attempts)`, attempts, failedAtMs };
  if (attempts >= deps.retry.attempts) {
    await deps.deadLetters.bury(tenant, id, outcome);
    return { ...report, result: 'dead', parked: report.parked + left.length };
  }
  const delaySeconds = backoffSeconds(deps.retry, attempts);
  await deps.deadLetters.reschedule(tenant, id, outcome, failedAtMs + delaySeconds * 1000);
  await deps.retryQueue.wake([wakeUp], delaySeconds);
  return { ...report, result: 'rescheduled' };
}
