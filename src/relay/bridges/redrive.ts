/**
 * Redrive of a tenant's bridge dead letters (admin API), off the request path: each letter
 * becomes a retry letter again with a fresh attempt budget, due now, and the sink-retry worker
 * is woken for it; the sending happens there (`retry-lane.ts`), never in the admin request.
 * Retry letters overdue by more than a lease (their wake-up was lost, or their attempt
 * crashed) are scheduled again too. A letter whose sink no longer exists stays listed.
 */
import type { BridgeDeps } from './deliver-to-sinks.ts';

/** Letters scheduled per redrive call (the listing's page); call again for more. */
export const REDRIVE_LETTERS_PER_CALL = 100;

export interface RedriveSchedule {
  /** Letters handed to the retry worker by this call. */
  scheduled: number;
  /** Events those letters hold. */
  events: number;
  /** Letters left because their sink is gone. */
  orphaned: number;
}

export async function scheduleRedrive(deps: BridgeDeps, tenant: string): Promise<RedriveSchedule> {
  const now = deps.now();
  const overdueBeforeMs = now - deps.leaseMs;
  const letters = await deps.deadLetters.listRedrivable(tenant, REDRIVE_LETTERS_PER_CALL, overdueBeforeMs);
  const sinkNames = new Set((await deps.sinks.getSinks(tenant)).map((sink) => sink.settings.name));
  const schedule: RedriveSchedule = { scheduled: 0, events: 0, orphaned: 0 };
  const wakeUps = [];
  for (const letter of letters) {
    if (!sinkNames.has(letter.sink)) {
      schedule.orphaned += 1;
      continue;
    }
    // Conditional: a letter another redrive just scheduled is not scheduled twice.
    if (!(await deps.deadLetters.scheduleRedrive(tenant, letter.id, now, overdueBeforeMs))) continue;
    wakeUps.push({ tenant, letter: letter.id });
    schedule.scheduled += 1;
    schedule.events += letter.events.length;
  }
  if (wakeUps.length > 0) await deps.retryQueue.wake(wakeUps, 0);
  return schedule;
}
