/** The tenant-scoped, durable event log: admission with `(source, id)` dedupe, and replay reads. */
import type { Position } from '../../protocol/positions.ts';
import type { AdmittedEvent, AppendOutcome, HistoryItem, Page, ReplayResult, SeqLessAnchor } from '../domain/stored-event.ts';

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
   */
  replay(tenant: string, session: string, after?: Position): Promise<ReplayResult>;
  /** The session's events stored at or after `sinceMs`, oldest first, among its newest `limit`. */
  storedSince(tenant: string, session: string, sinceMs: number, limit?: number): Promise<HistoryItem[]>;
  /** Sessions the tenant holds history for, one bounded page at a time (replay-all). */
  listSessions(tenant: string, limit: number, cursor?: string): Promise<Page<string>>;
  /** The place a seq-less event arriving now takes in its session's history. */
  anchorSeqLess(tenant: string, session: string): Promise<SeqLessAnchor>;
}
