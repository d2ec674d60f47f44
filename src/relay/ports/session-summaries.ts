/** Per-session summaries for `GET /sessions`, maintained from the stored-event stream, never by scanning the log. */
import type { SessionActivity, SessionFilter, SessionSummary, SessionTop } from '../domain/history.ts';
import type { Page } from '../domain/stored-event.ts';

export interface FoldOptions {
  /** The session's new top (the highest order key fan-out has finished with); absent: unchanged. */
  top?: string;
  /** Fold only when the session's top is below this key (the batch's lowest): otherwise write nothing and answer `refused`. */
  onlyAbove?: string;
}

/** What folding a batch into a session's summary did. */
export type FoldAttempt =
  /** `topBefore`: the top it replaced (null: none), when the fold set one. */
  | { kind: 'folded'; topBefore?: string | null }
  /**
   * Nothing written: the batch was folded in before (its watermark is not newer than the
   * recorded one), or `onlyAbove` was not met. `current`: the summary's top as it stands.
   */
  | { kind: 'refused'; current: SessionTop };

export interface SessionSummariesPort {
  /** Folds one stream batch's activity of one session into its summary; a batch seen before (same watermark or older) is refused, not counted again. */
  fold(activity: SessionActivity, options?: FoldOptions): Promise<FoldAttempt>;
  /** The session's top and newest folded batch, strongly consistent. */
  readTop(tenant: string, session: string): Promise<SessionTop>;
  /** The tenant's sessions, newest activity first, without expired ones; one bounded page at a time. */
  listSummaries(tenant: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<SessionSummary>>;
}
