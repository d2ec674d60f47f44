/**
 * The replay-to-live handoff's shared state: while a subscription replays, fan-out parks
 * matching events on it; the binding then delivers them and flips the subscription live.
 */
import type { CoveredPosition, ParkedEvent, StoredSubscription } from '../domain/subscription.ts';

export interface ParkingPort {
  /**
   * Parks a matching event on a replaying subscription entry. False when the entry is no
   * longer replaying (deliver it live instead) or its parking space is full.
   */
  parkPending(subscription: StoredSubscription, parked: ParkedEvent): Promise<boolean>;
  /**
   * Flips one entry to `live` only if no more events were parked than the `drained` count the
   * caller delivered, recording what the consumer already has. False when more arrived.
   */
  goLive(subscription: StoredSubscription, drained: number, covered?: Readonly<Record<string, CoveredPosition>>): Promise<boolean>;
}
