/**
 * Redrive of a tenant's bridge dead letters (admin API): each letter is sent again to its
 * sink's current settings with the full retry budget, and removed once that is done; what
 * fails again is parked as a new letter. A letter whose sink no longer exists stays listed.
 */
import type { BridgeDeps } from './deliver-to-sinks.ts';
import { deliverToSink, outboundOf } from './deliver-to-sinks.ts';

/** Letters taken per redrive call, so one admin request stays within the function's time. */
export const REDRIVE_LETTERS_PER_CALL = 25;

export interface RedriveReport {
  /** Letters taken out of the store. */
  letters: number;
  /** Events those letters held that reached their sink this time. */
  delivered: number;
  /** Events that failed again (parked as new letters). */
  parkedAgain: number;
  /** Letters left because their sink is gone. */
  orphaned: number;
}

export async function redriveDeadLetters(deps: BridgeDeps, tenant: string): Promise<RedriveReport> {
  const letters = await deps.deadLetters.list(tenant, REDRIVE_LETTERS_PER_CALL);
  const sinks = new Map((await deps.sinks.getSinks(tenant)).map((sink) => [sink.settings.name, sink]));
  const report: RedriveReport = { letters: 0, delivered: 0, parkedAgain: 0, orphaned: 0 };
  for (const letter of letters) {
    const sink = sinks.get(letter.sink);
    if (sink === undefined) {
      report.orphaned += 1;
      continue;
    }
    const sent = await deliverToSink(deps, tenant, sink, outboundOf(letter.events));
    // Removed only after the resend (and any new letter) is done: a crash in between leaves a
    // duplicate letter, never a lost one.
    await deps.deadLetters.remove(tenant, letter.id);
    report.letters += 1;
    report.delivered += sent.delivered;
    report.parkedAgain += sent.parked;
  }
  return report;
}
