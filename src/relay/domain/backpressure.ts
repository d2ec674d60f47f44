/**
 * What to do with an event a consumer cannot take now (AEP-0003 §8.4), for every binding:
 * `debug` and `info` events may be dropped; for `notice` and above the consumer is
 * disconnected with its positions so it resumes exactly, never silently missing one.
 */
import { isSeverity, severityRank } from '../../protocol/levels.ts';

export type BackpressureAction = 'drop' | 'disconnect';

/** The action for an undeliverable event of this severity (absent or unknown counts as `info`). */
export function backpressureAction(severity: unknown): BackpressureAction {
  const level = isSeverity(severity) ? severity : 'info';
  return severityRank(level) <= severityRank('info') ? 'drop' : 'disconnect';
}
