/**
 * A recorded subscription (AEP-0003 §6) as fan-out and the replay handoff see it: one entry
 * per place it is indexed (each pinned session, or the tenant's unpinned set).
 */
import type { CaptureLevel } from '../../protocol/levels.ts';

/** `replaying` while its replay is read (fan-out parks matching events), then `live`. */
export type SubscriptionState = 'replaying' | 'live';

/** What a binding records when a consumer subscribes. */
export interface NewSubscription {
  subscriptionId: string;
  /** The validated attr-match filter, as JSON text. */
  filter: string;
  ceiling?: CaptureLevel;
  /** The sessions the filter pins by equality; absent when it pins none. */
  sessions?: readonly string[];
  /**
   * For a filter pinning no session: the first type segments it can match (`typeSegmentsOf`),
   * so it is indexed where only batches carrying those types read it; absent when unconstrained.
   */
  typeSegments?: readonly string[];
}

/**
 * Fan-out's decision to disconnect a consumer that could not take a `notice`-or-above event
 * (AEP-0003 §8.4), kept on each of its entries until the `closing` frame gets through.
 */
export interface ClosingMark {
  /** When fan-out decided (ms); past the grace it closes without the frame. */
  sinceMs: number;
  /** The last position delivered under this subscription, when fan-out knew one. */
  delivered?: { session: string; epoch: number; seq: number };
}

/** Which entry of a subscription this is; the store's own key, opaque to the relay. */
export interface SubscriptionEntryKey {
  readonly pk: string;
  readonly sk: string;
}

/** One event fan-out parked on a replaying subscription. */
export interface ParkedEvent {
  raw: string;
  /** Released after its session's release point passed it (`order/emitter-order.ts`). */
  late?: boolean;
  /** A retransmit forwarded as received (AEP-0003 §5). */
  redelivery?: boolean;
}

export interface StoredSubscription {
  connectionId: string;
  subscriptionId: string;
  /** The validated attr-match filter, as JSON text. */
  filter: string;
  ceiling?: CaptureLevel;
  state: SubscriptionState;
  /** Matching events fan-out parked while the subscription was replaying (stream order). */
  pending: ParkedEvent[];
  /** The index entry's key, for the replay handoff. */
  indexKey: SubscriptionEntryKey;
  /** Set once fan-out decided to disconnect the connection: nothing more is delivered to it. */
  closing?: ClosingMark;
}
