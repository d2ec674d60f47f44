/** What fan-out delivers: one newly stored event (or forwarded duplicate) of one tenant. */
import type { AepEvent } from '../../protocol/event.ts';

/**
 * Where a stored session event sits in its session's order, as the log keys it. Opaque to the
 * relay except for one property: keys of one session compare, as strings, in session order
 * (`(epoch, seq)`, with seq-less events in their place).
 */
export interface SessionOrderKey {
  /** The event's place in its session's order. */
  key: string;
  /** The log item holding it (what a late-ledger entry points at). */
  itemKey: string;
}

export interface Deliverable {
  /** The source record's id, reported back when fan-out could not handle it (so it is retried). */
  recordId: string;
  tenant: string;
  raw: string;
  event: AepEvent;
  /** `redelivery`: a duplicate forwarded live as received (AEP-0003 §5), never skipped. */
  kind: 'event' | 'redelivery';
  /** Set for a session event newly stored: its place in the session's order. */
  order?: SessionOrderKey;
  /** Its record's place in store order (string order is store order); set on stream records, not on gap fills. */
  storeRank?: string;
  /** When the log stored it (ms), when known. */
  storedAtMs?: number;
  /**
   * Set on an event fan-out read from the log to close a gap in live order before its own
   * stream record arrived (`fanout/session-sequencer.ts`).
   */
  gapFill?: true;
}

/** A session event stored after a higher one of its session (`fanout/late-arrivals.ts`). */
export interface LateArrival {
  orderKey: string;
  itemKey: string;
  /** The highest order key of the session stored before it. */
  above: string;
  /** Its place in store order (`Deliverable.storeRank`). */
  storeRank: string;
}
