/** Per-session summaries for `GET /sessions`, maintained from the stored-event stream, never by scanning the log. */
import type { SessionActivity, SessionFilter, SessionSummary, SessionTops } from '../domain/history.ts';
import type { Page } from '../domain/stored-event.ts';

export interface SessionSummariesPort {
  /**
   * Folds one batch's activity into the summaries; a batch seen before (same watermark or older)
   * is not counted again. Answers, for each session whose summary this batch updated, the
   * highest order key stored before the batch (what `late-arrivals.ts` measures against).
   */
  recordActivity(activities: readonly SessionActivity[]): Promise<SessionTops>;
  /** The tenant's sessions, newest activity first, without expired ones; one bounded page at a time. */
  listSummaries(tenant: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<SessionSummary>>;
}
