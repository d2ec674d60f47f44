/**
 * The sink-retry worker's push letters (`lane: 'push'` wake-ups): a notification the live lane
 * could not hand to the push service gets its remaining attempts here, off the shared stream
 * batch, with the full request timeout and the bridges' backoff. A notification outlives its use
 * quickly, so a letter whose attempts are spent is removed (counted in `PushesFailed` as each
 * attempt was), not kept as a dead letter; one whose subscription is gone is removed too.
 */
import type { SinkRetryWakeUp } from '../ports/sink-retry-queue.ts';
import { outboundOf } from '../bridges/deliver-to-sinks.ts';
import { backoffSeconds } from '../bridges/retry-backoff.ts';
import type { PushDeps } from './deliver-pushes.ts';
import { attemptPush } from './push-attempt.ts';
import { PUSH_LETTER_PREFIX } from './push-subscription.ts';

export type PushRetryResult = 'skipped' | 'sent' | 'rescheduled' | 'given-up' | 'orphaned';

export interface PushRetryReport {
  tenant: string;
  letter: string;
  result: PushRetryResult;
  sent: number;
}

export async function retryPushLetter(deps: PushDeps, wakeUp: SinkRetryWakeUp): Promise<PushRetryReport> {
  const { tenant, letter: id } = wakeUp;
  const now = deps.now();
  const report: PushRetryReport = { tenant, letter: id, result: 'skipped', sent: 0 };
  const letter = await deps.deadLetters.claim(tenant, id, now, now + deps.leaseMs);
  if (letter === undefined || !letter.sink.startsWith(PUSH_LETTER_PREFIX)) return report;
  const subscription = await deps.subscriptions.get(tenant, letter.sink.slice(PUSH_LETTER_PREFIX.length));
  if (subscription === undefined) {
    await deps.deadLetters.remove(tenant, id);
    return { ...report, result: 'orphaned' };
  }
  const attempt = await attemptPush(deps, tenant, subscription, outboundOf(letter.events), { timeoutMs: deps.requestTimeoutMs });
  const attempts = letter.attempts + 1;
  report.sent = attempt.sent;
  if (attempt.retryable.length === 0) {
    await deps.deadLetters.remove(tenant, id);
    return { ...report, result: 'sent' };
  }
  if (attempts >= deps.retry.attempts) {
    await deps.deadLetters.remove(tenant, id);
    return { ...report, result: 'given-up' };
  }
  const failedAtMs = deps.now();
  const delaySeconds = backoffSeconds(deps.retry, attempts);
  const outcome = { events: attempt.retryable.map((outbound) => outbound.raw), reason: `${attempt.reason ?? 'not delivered'} (after ${attempts} attempts)`, attempts, failedAtMs };
  await deps.deadLetters.reschedule(tenant, id, outcome, failedAtMs + delaySeconds * 1000);
  await deps.retryQueue.wake([wakeUp], delaySeconds);
  return { ...report, result: 'rescheduled' };
}
