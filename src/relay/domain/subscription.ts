/**
 * A recorded subscription (AEP-0003 §6) as fan-out and the replay handoff see it: one entry
 * per place it is indexed (each pinned session, or the tenant's unpinned set).
 */
import type { CaptureLevel } from '../../protocol/levels.ts';

/** `replaying` while its replay is read (fan-out parks matching events), then `live`. */
export type SubscriptionState = 'replaying' | 'live';

/** A position within one session, without the session (the key it is stored under). */
export interface CoveredPosition {
  epoch: number;
  seq: number;
}

/** What a binding records when a consumer subscribes. */
export interface NewSubscription {
  subscriptionId: string;
  /** The validated attr-match filter, as JSON text. */
  filter: string;
  ceiling?: CaptureLevel;
  /** The sessions the filter pins by equality; absent when it pins none. */
  sessions?: readonly string[];
}

/** Which entry of a subscription this is; the store's own key, opaque to the relay. */
export interface SubscriptionEntryKey {
  readonly pk: string;
  readonly sk: string;
}

export interface StoredSubscription {
  connectionId: string;
  subscriptionId: string;
  /** The validated attr-match filter, as JSON text. */
  filter: string;
  ceiling?: CaptureLevel;
  state: SubscriptionState;
  /** Matching events fan-out parked while the subscription was replaying (raw texts, stream order). */
  pending: string[];
  /**
   * Per session, the position the consumer already has (its resume point or the newest event
   * replayed to it): fan-out skips events at or below it that reach the stream late.
   */
  covered: Readonly<Record<string, CoveredPosition>>;
  /** The index entry's key, for the replay handoff. */
  indexKey: SubscriptionEntryKey;
}
