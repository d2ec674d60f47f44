/** The tenant-scoped, durable event log: admission with `(source, id)` dedupe, and replay reads. */
import type { Position } from '../../protocol/positions.ts';
import type { HistoryBudget, HistoryPage, HistoryRange } from '../domain/history.ts';
import type { AdmittedEvent, AppendOutcome, Page, SeqLessAnchor, StoredAnnotations, WindowItem } from '../domain/stored-event.ts';

export interface EventLogPort {
  /**
   * Stores an event once per `(tenant, session, source, id)` (agent-scoped events: per
   * `(tenant, agent, source, id)`), the partition it is stored in. A duplicate is stored no second time but
   * still forwarded live (AEP-0003 §5). A seq-less event takes `anchor`'s place when given.
   * `annotations` are stored beside the text in the same write, never in it.
   */
  append(tenant: string, admitted: AdmittedEvent, anchor?: SeqLessAnchor, annotations?: StoredAnnotations): Promise<AppendOutcome>;
  /**
   * The newest `limit` events of a session strictly after `after` (every emitter's; seq-less
   * ones in their place), oldest first, strongly consistent: what a replay filters by the
   * release points (`subscribe/session-replay.ts`).
   */
  readWindow(tenant: string, session: string, after: Position | undefined, limit: number): Promise<WindowItem[]>;
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
