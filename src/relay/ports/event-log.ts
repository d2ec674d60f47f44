/** The tenant-scoped, durable event log: admission with `(source, id)` dedupe, and replay reads. */
import type { Position } from '../../protocol/positions.ts';
import type { HistoryBudget, HistoryPage, HistoryRange } from '../domain/history.ts';
import type { LateArrival } from '../domain/deliverable.ts';
import type { AdmittedEvent, AppendOutcome, HistoryItem, Page, ReplayResult, SeqLessAnchor, StoredEvent } from '../domain/stored-event.ts';

export interface EventLogPort {
  /**
   * Stores an event once per `(tenant, session, source, id)` (agent-scoped events: per
   * `(tenant, agent, source, id)`), the partition it is stored in. A duplicate is stored no second time but
   * still forwarded live (AEP-0003 §5). A seq-less event takes `anchor`'s place when given.
   */
  append(tenant: string, admitted: AdmittedEvent, anchor?: SeqLessAnchor): Promise<AppendOutcome>;
  /**
   * Replay of one session (AEP-0003 §5): the events after `after` (the whole served window when
   * absent), limited to the served window, saying where it starts when `after` predates it.
   * Also the events below `after` that were stored after a position at or above it (recorded by
   * `recordLateArrivals`): a consumer holding `after` may never have seen those (AEP-0003 §7).
   * Nothing above the session's top (what fan-out has finished with) is served; `pendingThrough`
   * says up to where something was left out for that.
   */
  replay(tenant: string, session: string, after?: Position): Promise<ReplayResult>;
  /** Tells, for positions of the session, whether fan-out has finished with them (at or below the session's top), as of this call. */
  finishedWith(tenant: string, session: string): Promise<(position: Position) => boolean>;
  /** The session's top: the highest order key (`SessionOrderKey`) fan-out has finished with, null when none. */
  sessionTop(tenant: string, session: string): Promise<string | null>;
  /** The session's events stored at or after `sinceMs`, oldest first, among its newest `limit`, none above the session's top. */
  storedSince(tenant: string, session: string, sinceMs: number, limit?: number): Promise<HistoryItem[]>;
  /** Records events of a session that were stored after a higher one of it (fan-out, from the stream). */
  recordLateArrivals(tenant: string, session: string, arrivals: readonly LateArrival[]): Promise<void>;
  /**
   * The session's sequenced events strictly between two positions (`after` absent: from the
   * start), at most `limit`: the lowest ones oldest first, or with `newestFirst` the highest ones.
   */
  storedBetween(tenant: string, session: string, after: Position | undefined, before: Position, limit: number, newestFirst?: boolean): Promise<StoredEvent[]>;
  /** Sessions the tenant holds history for, one bounded page at a time (replay-all). */
  listSessions(tenant: string, limit: number, cursor?: string): Promise<Page<string>>;
  /** The place a seq-less event arriving now takes in its session's history. */
  anchorSeqLess(tenant: string, session: string): Promise<SeqLessAnchor>;
  /**
   * One page of a session's stored history over `range`, strongly consistent, in `(epoch, seq)`
   * order with seq-less events (commands) in their place; expired events are never returned.
   * `cursor` continues a previous page of the same range. The only layout-specific history read.
   */
  historyPage(tenant: string, session: string, range: HistoryRange, budget: HistoryBudget, cursor?: string): Promise<HistoryPage>;
}
