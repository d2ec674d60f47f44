/**
 * The replay-to-live handoff's shared state: while a subscription replays, fan-out parks
 * matching events on it; the binding then delivers them and flips the subscription live.
 */
import type { ParkedEvent, StoredSubscription } from '../domain/subscription.ts';

export interface ParkingPort {
  /**
   * Parks a matching event on a replaying subscription entry: `not-replaying` when the entry
   * went live meanwhile (deliver it live instead), `full` when its parking space is, `gone` when
   * the subscription was removed (its opening failed, or it was unsubscribed): nothing to deliver.
   */
  parkPending(subscription: StoredSubscription, parked: ParkedEvent): Promise<ParkOutcome>;
  /**
   * Flips a subscription's entries to `live` together, each only if no more events were parked
   * on it than the `drained` count the caller delivered. False when more arrived on any of them
   * (then none flipped).
   */
  goLive(entries: readonly DrainedEntry[]): Promise<boolean>;
}

export type ParkOutcome = 'parked' | 'not-replaying' | 'full' | 'gone';

/** One index entry of a subscription, with how many of its parked events the handoff delivered. */
export interface DrainedEntry {
  subscription: StoredSubscription;
  drained: number;
}
