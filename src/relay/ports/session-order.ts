/**
 * Where session order is kept (`order/emitter-order.ts`): each emitter's order state of a
 * session, the late entries, and the few log reads the order needs. One port, one adapter.
 */
import type { LateEntry, OrderRecord, OrderState, Place } from '../order/emitter-order.ts';

/** One emitter's session (AEP-0001 §5.2: sessions are emitter-scoped). */
export interface EmitterSession {
  tenant: string;
  session: string;
  source: string;
}

export type CommitOutcome = { ok: true } | { ok: false; current: OrderState };

/** A stored event of one emitter, read back by place. */
export interface PlacedEvent {
  place: Place;
  raw: string;
}

/** What the latest confirmations say was delivered. */
export interface ConfirmedDelivery {
  through: Place | null;
  /** The late events the last confirmation that named any covered (every one pending at its step). */
  late: Place[];
}

export interface SessionOrderPort {
  /** The emitter's order state, strongly consistent (the empty state when it has none). */
  load(key: EmitterSession): Promise<OrderState>;
  /**
   * Writes `next` if the stored version is still `expectedVersion`, else answers the stored
   * state. With `wakeAtMs` the write is also a wake-up: its stream record brings fan-out back.
   */
  commit(key: EmitterSession, expectedVersion: number, next: OrderState, wakeAtMs?: number): Promise<CommitOutcome>;
  /**
   * Records that everything released in order up to `through` was delivered (raises the
   * state's `delivered`, never lowers it), and the late events `late` too (every one the step
   * had pending). Its own item, so it never wakes fan-out.
   */
  confirmDelivered(key: EmitterSession, through: Place, late: readonly Place[]): Promise<void>;
  /** What is confirmed delivered (`through` null: nothing in order yet), strongly consistent. */
  confirmedDelivery(key: EmitterSession): Promise<ConfirmedDelivery>;
  /** Every emitter's release point of a session name, strongly consistent, by source. */
  releasedPoints(tenant: string, session: string): Promise<Map<string, Place>>;
  /** The emitter's stored events strictly between two places (a gap check), at most `limit`. */
  storedBetween(key: EmitterSession, after: Place | null, before: Place, limit: number): Promise<OrderRecord[]>;
  /** The emitter's stored events at these places (those the log holds), in place order. */
  eventsAt(key: EmitterSession, places: readonly Place[]): Promise<PlacedEvent[]>;
  /** The emitter's stored events in `(after, through]`, in place order. */
  eventsIn(key: EmitterSession, after: Place | null, through: Place): Promise<PlacedEvent[]>;
  /** Records late events (idempotent: recording one again writes the same item). */
  recordLate(key: EmitterSession, entries: readonly LateEntry[]): Promise<void>;
  /**
   * What a consumer holding `below` (a bare position, any emitter) may lack beneath it: every
   * late event of the session name below it whose `above` is at or above it, in position order.
   */
  lateBelow(tenant: string, session: string, below: Place): Promise<string[]>;
}
