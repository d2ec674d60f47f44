/**
 * Runs one delivery lane's work somewhere other than the fan-out invocation: a lane worker
 * (`functions/fanoutlane`, invoked synchronously in AWS; worker processes, or this process,
 * locally). Resolves with the lane's counts once every action of it ran; rejects when the
 * runner failed (a crash, a timeout, no capacity), whatever part of the work it did.
 */
import type { FanoutCounts } from './connection-delivery.ts';
import type { LaneWork } from './lane-work.ts';

export interface DeliveryLanesPort {
  deliver(work: LaneWork): Promise<FanoutCounts>;
}
