/**
 * Events on their way into and out of the log: admitted (validated, with the exact text they
 * arrived as) and read back for replay.
 */
import type { AepEvent } from '../../protocol/event.ts';
import type { Position } from '../../protocol/positions.ts';
import type { SessionOrderKey } from './deliverable.ts';

/** An event that passed validation, with the exact text it arrived as (AEP-0004 §4.4 byte identity). */
export interface AdmittedEvent {
  event: AepEvent;
  raw: string;
}

/**
 * `duplicate`: the log already held this `(source, id)` at this place (AEP-0003 §5 dedupe);
 * `conflict`: another event holds this `(epoch, seq)` position of the session (AEP-0001 §7.2,
 * an emitter fault), so this one was not stored.
 */
export type AppendOutcome = 'stored' | 'duplicate' | 'conflict';

/** Where a seq-less event takes its place in its session's history; opaque to the relay. */
export interface SeqLessAnchor {
  readonly positionKey: string;
}

/** A stored session event read back with its place in the session's order (fan-out's ordering reads). */
export interface StoredEvent {
  raw: string;
  order: SessionOrderKey;
  storedAtMs?: number;
}

/** One stored event read back from a session's history, as the text it was admitted as. */
export interface HistoryItem {
  raw: string;
}

export interface ReplayResult {
  /** Set when the requested position predates the served window (AEP-0003 §5 `replay-exhausted`). */
  exhaustedEarliest?: Position;
  /** The served events after the requested position, oldest first. */
  items: HistoryItem[];
  /**
   * Set when events are stored after the requested position that fan-out has not finished with
   * yet, so this replay left them out: the highest order key among them (`SessionOrderKey`). A
   * live subscription gets them live; a one-shot read, once fan-out has (`EventLogPort.sessionTop`).
   */
  pendingThrough?: string;
}

export interface Page<T> {
  items: T[];
  /** Opaque cursor for the next page; absent on the last one. */
  cursor?: string;
}
