/**
 * History beyond the replay window (AEP-0001 §7.5 leaves complete history to a history
 * consumer's product surface; this relay offers one over the log it already keeps): the
 * ranges a page of one session's history is read over, and the session summaries listed.
 */
import type { Position } from '../../protocol/positions.ts';
import type { HistoryItem } from './stored-event.ts';

/** Which stored events of one session a history read covers. Every bound is exclusive except `sinceMs`. */
export interface HistoryRange {
  /** Strictly after this position (seq-less events anchored at it included, AEP-0003 §7). */
  after?: Pick<Position, 'epoch' | 'seq'>;
  /** Strictly before this position. */
  before?: Pick<Position, 'epoch' | 'seq'>;
  /** Admission time window, epoch ms: `sinceMs <= storedAt < untilMs`. */
  sinceMs?: number;
  untilMs?: number;
  /** `asc`: oldest first, `(epoch, seq)` order; `desc`: the same order reversed. */
  order: 'asc' | 'desc';
}

/** How much one page may read and answer. */
export interface HistoryBudget {
  /** Most stored events the page reads (filtered-out and expired ones count: a page costs what it reads). */
  limit: number;
  /** Most bytes of stored text the page answers. */
  maxBytes: number;
}

export interface HistoryPage {
  items: HistoryItem[];
  /** The store's continuation, opaque to the relay; absent when the range is read to its end. */
  cursor?: string;
}

/** What is known of one session's stored events. */
export interface SessionFacts {
  /** The agent of the first event stored for the session. */
  agent: string;
  firstEventMs: number;
  lastEventMs: number;
  /** The newest sequenced position stored (by arrival), when the session has one. */
  lastPosition?: Pick<Position, 'epoch' | 'seq'>;
  eventCount: number;
  /** A `session.ended` event was stored. */
  ended: boolean;
}

/** One session as `GET /sessions` lists it. */
export interface SessionSummary extends SessionFacts {
  session: string;
}

/** Which sessions a listing covers. */
export interface SessionFilter {
  agent?: string;
  /** Session ids starting with this text. */
  prefix?: string;
  /** Sessions with activity in `[sinceMs, untilMs)`. */
  sinceMs?: number;
  untilMs?: number;
}

/** What one stream batch stored for one session, folded into its summary. */
export interface SessionActivity extends SessionSummary {
  tenant: string;
  /** Epoch seconds after which the newest of these events has expired. */
  visibleUntilSec: number;
  /** Ordered watermark of the batch (its newest stream sequence number), so a retried batch is not counted twice. */
  watermark: string;
}
