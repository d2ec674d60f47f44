/**
 * Delivery lanes: how one batch's deliveries scale past what one invocation posts in time.
 *
 * A batch whose planned actions exceed `fanout.laneDeliveries` is split into lanes (up to
 * `fanout.maxLanes`): each connection is hashed by its id to one lane, and carries all of its
 * actions of the batch there, in order. The fan-out invocation runs lane 0 itself and hands
 * every other lane to a lane worker (`DeliveryLanesPort`: a synchronous invocation of
 * `functions/fanoutlane` in AWS), all at once; the batch ends when every lane has ended.
 *
 * Order holds by structure, not by bookkeeping: one connection's deliveries of a batch are in one
 * lane, run one after another; and the stream's next batch starts only after this one ended
 * (one batch per shard at a time, `infra/constructs/fanout.ts`), so no later delivery to a
 * connection can overtake an earlier one, whichever lane or runner carried either.
 *
 * Failure: a lane whose worker failed (crashed, timed out, was refused capacity) is run again
 * from its start by a fresh worker, up to `LANE_WORKER_ATTEMPTS`, then by the fan-out invocation
 * itself. The work is self-contained, so every runner does the same thing. What a failed run had
 * already posted goes out again: duplicates, which at-least-once delivery allows (consumers
 * dedupe on `(source, id)`, AEP-0001 §7.4); a repeated run repeats a connection's deliveries in
 * the same order, so the first copy of each still arrives in order. Nothing is skipped, so
 * nothing is lost. The same per-connection rules apply in every lane: backpressure, closing
 * marks, parking (`connection-delivery.ts`).
 */
import type { Logger } from '../../observability/logger.ts';
import type { DeliveryLanesPort } from './delivery-lanes-port.ts';
import type { FanoutCounts } from './connection-delivery.ts';
import { addCounts, deliverLane } from './deliver-lane.ts';
import type { LaneRuntime } from './deliver-lane.ts';
import type { ConnectionPlan } from './delivery-plan.ts';
import { encodeLaneWork } from './lane-work.ts';
import type { LaneWork } from './lane-work.ts';

/** Worker runs of one lane before the fan-out invocation runs it itself. */
export const LANE_WORKER_ATTEMPTS = 2;

export interface LaneSettings {
  /** Actions one lane takes before the batch is split further. */
  laneDeliveries: number;
  /** Lanes one batch is split into at most; 1 keeps every delivery in the fan-out invocation. */
  maxLanes: number;
}

/** How many lanes a batch of `actions` planned actions runs in. */
export function laneCountFor(actions: number, settings: LaneSettings): number {
  const wanted = Math.ceil(actions / Math.max(1, settings.laneDeliveries));
  return Math.max(1, Math.min(Math.max(1, settings.maxLanes), wanted));
}

/** The plans split into `count` lanes, each connection in the lane its id hashes to. */
export function splitIntoLanes(plans: ReadonlyMap<string, ConnectionPlan>, count: number): Array<Map<string, ConnectionPlan>> {
  const lanes = Array.from({ length: Math.max(1, count) }, () => new Map<string, ConnectionPlan>());
  for (const [connectionId, plan] of plans) (lanes[laneOf(connectionId, lanes.length)] as Map<string, ConnectionPlan>).set(connectionId, plan);
  return lanes;
}

/** FNV-1a of the id, to a lane: even spread, and the same lane for the same id and count. */
export function laneOf(connectionId: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < connectionId.length; index += 1) {
    hash ^= connectionId.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

export type LanesRuntime = LaneRuntime & { deliveryLanes?: DeliveryLanesPort };

/** Every plan delivered, in lanes when the batch needs them and a lane runner exists. */
export async function deliverInLanes(runtime: LanesRuntime, logger: Logger, plans: ReadonlyMap<string, ConnectionPlan>): Promise<FanoutCounts> {
  const runner = runtime.deliveryLanes;
  let actions = 0;
  for (const plan of plans.values()) actions += plan.actions.length;
  const count = runner === undefined ? 1 : laneCountFor(actions, runtime.config.fanout);
  if (runner === undefined || count === 1) return deliverLane(runtime, logger, plans);
  const [own, ...others] = splitIntoLanes(plans, count);
  const total: FanoutCounts = { posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const results = await Promise.all([
    deliverLane(runtime, logger, own as Map<string, ConnectionPlan>),
    ...others.map((lane, index) => (lane.size === 0 ? Promise.resolve(undefined) : runElsewhere(runtime, runner, logger, lane, index + 1))),
  ]);
  for (const counts of results) if (counts !== undefined) addCounts(total, counts);
  logger.debug('fan-out lanes', { lanes: count, actions, posted: total.posted });
  return total;
}

/**
 * Lambda takes at most 6 MB in a synchronous invocation; a lane's work is kept under 5 MB (JSON
 * bytes). A lane over it goes as several invocations, one after another (its connections split,
 * each still whole in one part); a single connection whose work alone is over it (a batch of
 * very large events) is delivered by the fan-out invocation.
 */
export const LANE_PAYLOAD_BYTES = 5 * 1024 * 1024;

async function runElsewhere(runtime: LaneRuntime, runner: DeliveryLanesPort, logger: Logger, lane: Map<string, ConnectionPlan>, laneIndex: number): Promise<FanoutCounts> {
  const total: FanoutCounts = { posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  for (const part of partsUnder(lane, LANE_PAYLOAD_BYTES)) {
    addCounts(total, part.work === undefined ? await deliverLane(runtime, logger, part.plans) : await runPart(runtime, runner, logger, part.plans, part.work, laneIndex));
  }
  return total;
}

async function runPart(runtime: LaneRuntime, runner: DeliveryLanesPort, logger: Logger, plans: Map<string, ConnectionPlan>, work: LaneWork, laneIndex: number): Promise<FanoutCounts> {
  for (let attempt = 1; attempt <= LANE_WORKER_ATTEMPTS; attempt += 1) {
    try {
      return await runner.deliver(work);
    } catch (error) {
      logger.error('a delivery lane worker failed; its lane runs again from its start', { lane: laneIndex, attempt, connections: plans.size, error: error instanceof Error ? error.message : String(error) });
    }
  }
  // The workers could not take it: this invocation delivers the lane itself (slower, never lost).
  return deliverLane(runtime, logger, plans);
}

/** The lane as parts whose work is under `limit` bytes; a part without work is one connection too big to send. */
export function partsUnder(lane: Map<string, ConnectionPlan>, limit: number): Array<{ plans: Map<string, ConnectionPlan>; work?: LaneWork }> {
  const work = encodeLaneWork(lane);
  if (Buffer.byteLength(JSON.stringify(work), 'utf8') <= limit) return [{ plans: lane, work }];
  if (lane.size <= 1) return [{ plans: lane }];
  const entries = [...lane];
  const half = Math.ceil(entries.length / 2);
  return [...partsUnder(new Map(entries.slice(0, half)), limit), ...partsUnder(new Map(entries.slice(half)), limit)];
}
