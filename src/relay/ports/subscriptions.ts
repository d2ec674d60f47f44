/** Subscriptions (AEP-0003 §6): recorded by the bindings, read by fan-out. */
import type { ClosingMark, NewSubscription, StoredSubscription } from '../domain/subscription.ts';

export interface SubscriptionsPort {
  /**
   * Records a subscription in state `replaying`, before its replay is read (so nothing written
   * in between is missed). False when the connection is at `maxSubscriptions`. A subscribe
   * reusing an id replaces that subscription.
   */
  addSubscription(tenant: string, connectionId: string, subscription: NewSubscription, maxSubscriptions: number): Promise<boolean>;
  /** Removes a subscription; false when there was none. */
  removeSubscription(tenant: string, connectionId: string, subscriptionId: string): Promise<boolean>;
  /** The entries one subscription is indexed under (for the replay handoff). */
  subscriptionEntries(tenant: string, connectionId: string, subscriptionId: string): Promise<StoredSubscription[]>;
  /**
   * Subscriptions that may match events of these sessions and types: pinned to one of the
   * sessions, or unpinned and indexed under one of the types' first segments, or unconstrained.
   */
  subscriptionsFor(tenant: string, sessions: readonly string[], typeSegments?: readonly string[]): Promise<StoredSubscription[]>;
  /** Marks an entry as closing (fan-out's slow-consumer decision); an entry already gone stays gone. */
  markClosing(entry: StoredSubscription, mark: ClosingMark): Promise<void>;
}
