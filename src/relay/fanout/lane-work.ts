/**
 * One delivery lane's share of a fan-out batch, as it travels to a lane worker
 * (`functions/fanoutlane`): the connections hashed to the lane, each with its planned actions
 * in order, and the events those actions deliver, each once. Pure; JSON in and out.
 *
 * The work is self-contained (the worker reads nothing fan-out already read), so any runner
 * gives the same result: a worker invocation, or the coordinator itself (`delivery-lanes.ts`).
 */
import type { CaptureLevel } from '../../protocol/levels.ts';
import { parseStored } from '../domain/delivery-text.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { StoredSubscription } from '../domain/subscription.ts';
import type { ConnectionPlan, DeliveryAction } from './delivery-plan.ts';

/** A deliverable without its parsed event (the worker parses the text once). */
export interface LaneDeliverable {
  recordId: string;
  tenant: string;
  raw: string;
  kind: Deliverable['kind'];
  late?: true;
}

/** An action, naming its deliverable by index and a parked-on subscription by its place in `entries`. */
export type LaneAction =
  | { kind: 'post'; deliverable: number; ceiling?: CaptureLevel; subscriptionIds: string[] }
  | { kind: 'park'; deliverable: number; entry: number }
  | { kind: 'retry-closing' };

export interface LaneConnection {
  tenant: string;
  connectionId: string;
  /** Every entry of the connection fan-out read, without parked events (the worker never reads them). */
  entries: StoredSubscription[];
  actions: LaneAction[];
}

export interface LaneWork {
  deliverables: LaneDeliverable[];
  connections: LaneConnection[];
}

/** The lane's plans as work: each deliverable listed once, however many connections it goes to. */
export function encodeLaneWork(plans: ReadonlyMap<string, ConnectionPlan>): LaneWork {
  const deliverables: LaneDeliverable[] = [];
  const indexOf = new Map<Deliverable, number>();
  const deliverableIndex = (deliverable: Deliverable): number => {
    let index = indexOf.get(deliverable);
    if (index === undefined) {
      index = deliverables.length;
      indexOf.set(deliverable, index);
      deliverables.push({ recordId: deliverable.recordId, tenant: deliverable.tenant, raw: deliverable.raw, kind: deliverable.kind, ...(deliverable.late === true ? { late: true as const } : {}) });
    }
    return index;
  };
  const connections: LaneConnection[] = [];
  for (const plan of plans.values()) {
    const entries = plan.entries.map((entry) => ({ ...entry, pending: [] }));
    const actions = plan.actions.map((action): LaneAction => {
      if (action.kind === 'retry-closing') return action;
      if (action.kind === 'post') return { kind: 'post', deliverable: deliverableIndex(action.deliverable), ...(action.ceiling === undefined ? {} : { ceiling: action.ceiling }), subscriptionIds: action.subscriptionIds };
      return { kind: 'park', deliverable: deliverableIndex(action.deliverable), entry: entryIndex(plan, action.subscription) };
    });
    connections.push({ tenant: plan.tenant, connectionId: plan.connectionId, entries, actions });
  }
  return { deliverables, connections };
}

/** The plans back from work; a deliverable whose text no longer parses, or an action naming nothing, is refused whole. */
export function decodeLaneWork(work: LaneWork): Map<string, ConnectionPlan> {
  const deliverables = work.deliverables.map((item): Deliverable => {
    const event = parseStored(item.raw);
    if (event === undefined) throw new LaneWorkError('a lane deliverable is not a stored event');
    return { recordId: item.recordId, tenant: item.tenant, raw: item.raw, event, kind: item.kind, ...(item.late === true ? { late: true as const } : {}) };
  });
  const deliverableAt = (index: number): Deliverable => {
    const deliverable = deliverables[index];
    if (deliverable === undefined) throw new LaneWorkError(`a lane action names deliverable ${index} of ${deliverables.length}`);
    return deliverable;
  };
  const plans = new Map<string, ConnectionPlan>();
  for (const connection of work.connections) {
    const actions = connection.actions.map((action): DeliveryAction => {
      if (action.kind === 'retry-closing') return { kind: 'retry-closing' };
      if (action.kind === 'post') return { kind: 'post', deliverable: deliverableAt(action.deliverable), ceiling: action.ceiling, subscriptionIds: action.subscriptionIds };
      const subscription = connection.entries[action.entry];
      if (subscription === undefined) throw new LaneWorkError(`a lane action names entry ${action.entry} of ${connection.entries.length}`);
      return { kind: 'park', deliverable: deliverableAt(action.deliverable), subscription };
    });
    plans.set(connection.connectionId, { tenant: connection.tenant, connectionId: connection.connectionId, entries: connection.entries, actions });
  }
  return plans;
}

/** Work a worker cannot run (a bug, or a payload not made by `encodeLaneWork`). */
export class LaneWorkError extends Error {
  override readonly name = 'LaneWorkError';
}

function entryIndex(plan: ConnectionPlan, subscription: StoredSubscription): number {
  const index = plan.entries.indexOf(subscription);
  if (index === -1) throw new LaneWorkError('a park action names a subscription the plan did not read');
  return index;
}
