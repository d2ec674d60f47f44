/** Events on their way into and out of the log: admitted (validated, with the exact text they arrived as) and read back for replay. */
import type { Person } from '../../auth/oidc/person.ts';
import type { AepEvent } from '../../protocol/event.ts';

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

/** A stored session event as a replay reads it: its text, and where it stands. */
export interface WindowItem {
  raw: string;
  /** Its position (a seq-less event: the position it arrived after); null before every position. */
  anchor: { epoch: number; seq: number } | null;
}

/**
 * What the relay found about who sent a stored command: kept as an attribute of its log item
 * beside the text, never in it (AEP-0004 §4.4 byte identity), and shown by history.
 */
export interface SenderVerified {
  /** The operator whose identity card the sending connection presented, valid when it sent. */
  operator: string;
}

/** The relay's own findings stored beside an event's text. */
export interface StoredAnnotations {
  senderVerified?: SenderVerified;
  /** The signed-in person whose credential sent a command (team sign-in), beside its text, never in it. */
  sentBy?: Person;
  /**
   * The WebSocket connection an emitter's sequenced event came on: fan-out records the
   * connection's claim of the session from it (`fanout/session-claims.ts`).
   */
  via?: string;
}

/** One stored event read back from a session's history, as the text it was admitted as. */
export interface HistoryItem {
  raw: string;
  /** A command sent by a verified connection (`StoredAnnotations`). */
  senderVerified?: SenderVerified;
  /** A command sent with a signed-in person's credential (`StoredAnnotations`). */
  sentBy?: Person;
}

export interface Page<T> {
  items: T[];
  /** Opaque cursor for the next page; absent on the last one. */
  cursor?: string;
}
