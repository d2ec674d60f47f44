/** Per-session summaries for `GET /sessions`, maintained from the stored-event stream, never by scanning the log. */
import type { SessionActivity, SessionFilter, SessionSummary } from '../domain/history.ts';
import type { Page } from '../domain/stored-event.ts';

export interface SessionSummariesPort {
  /**
   * Folds one stream batch's activity of one session into its summary; a batch seen before (same
   * watermark or older) is not counted again. A listing only: no delivery or replay reads it.
   */
  fold(activity: SessionActivity): Promise<void>;
  /** The tenant's sessions, newest activity first, without expired ones; one bounded page at a time. */
  listSummaries(tenant: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<SessionSummary>>;
}
