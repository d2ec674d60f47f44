/**
 * Fan-out of a batch of stream records to WebSocket subscribers and SSE inboxes (AEP-0003 §5,
 * §6, §8.4).
 *
 * Order: each emitter's session goes through its order lane (`fanout/order-lane.ts`), which
 * releases its events in `(epoch, seq)` order and records what came late, committing the
 * session's release point before any subscription is read. Nothing waits: a session with an
 * open gap holds its own events and is woken by its state record, every other session of the
 * batch goes out at once.
 *
 * Cost shape: subscriptions are read once per batch and tenant, and only those that could
 * match: the tenant's unconstrained ones, those pinned to a session in the batch, and those
 * indexed under a first type segment (`tool`, `progress`) the batch's events carry.
 *
 * Speed: each connection's deliveries run one after another in that order; `fanout.concurrency`
 * posts are in flight over all connections, scheduled without head-of-line blocking
 * (`delivery-pool.ts`). A batch with more than one invocation can post in time is split into
 * delivery lanes run side by side by lane workers, each connection in one lane
 * (`delivery-lanes.ts`).
 *
 * Tenant isolation: the batch is shared by every tenant on the shard and the next batch waits
 * for it, so each tenant has at most `fanout.tenantDeliveriesPerBatch` deliveries in each lane;
 * past that its consumers are treated as ones that cannot take more (`connection-delivery.ts`).
 * One tenant's burst therefore holds another's next events for at most that many posts, spread
 * over `fanout.concurrency` in flight, per noisy tenant in the batch.
 *
 * Failure isolation: a gone connection (410) has its state removed; a slow one is handled by the
 * backpressure rule (`connection-delivery.ts`). Neither fails the batch. A failure to order,
 * fold or read subscriptions reports that tenant's records back (`failedRecordIds`), so the event
 * source mapping retries them.
 */
import { firstTypeSegment } from '../../protocol/attr-match.ts';
import type { AepEvent } from '../../protocol/event.ts';
import { positionOf } from '../../protocol/positions.ts';
import type { Logger } from '../../observability/logger.ts';
import { parseStored } from '../domain/delivery-text.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { SessionActivity } from '../domain/history.ts';
import { comparePlaces } from '../order/emitter-order.ts';
import type { OrderState, Place } from '../order/emitter-order.ts';
import { OrderLane } from './order-lane.ts';
import type { LaneRecord, LaneStep } from './order-lane.ts';
import type { EmitterSession } from '../ports/session-order.ts';
import { settleOwner } from '../control/session-ownership.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { KnownClaims } from '../control/known-claims.ts';
import type { KnownOwners } from '../control/session-ownership.ts';

/** What fan-out uses: order, owners, claims and summaries per tenant, then the delivery lanes. */
export type FanoutDeps = LanesRuntime & Pick<RelayPorts, 'sessionOwners' | 'claims' | 'sessionSummaries' | 'subscriptions'> & { knownOwners: KnownOwners; knownClaims: KnownClaims };
import type { FanoutCounts } from './connection-delivery.ts';
import { addCounts } from './deliver-lane.ts';
import { deliverInLanes } from './delivery-lanes.ts';
import type { LanesRuntime } from './delivery-lanes.ts';
import { planTenant } from './delivery-plan.ts';
import { claimSessions } from './session-claims.ts';
import type { ConnectionPlan } from './delivery-plan.ts';

export interface FanoutReport extends FanoutCounts {
  /** Ids of the records to hand back for a retry: every one of a tenant that could not be ordered or planned. */
  failedRecordIds: string[];
}

/** A held session's state record: it brings fan-out back to release what the session holds. */
export interface WakeUp {
  recordId: string;
  key: EmitterSession;
  /** The state as that write left it. */
  state: OrderState;
}

/** What one stream batch hands fan-out. */
export interface FanoutBatch {
  /** Events and redeliveries, in stream order. */
  deliverables: readonly Deliverable[];
  wakeUps: readonly WakeUp[];
  /** What the batch stored per session, folded into the session summaries (`GET /sessions`). */
  activities: readonly SessionActivity[];
}

export function createOrderLane(runtime: Pick<RelayPorts, 'sessionOrder' | 'now' | 'config'>): OrderLane {
  return new OrderLane({ order: runtime.sessionOrder, now: runtime.now, waitMs: runtime.config.fanout.orderWaitMs, adoptAfterMs: runtime.config.fanout.orderAdoptMs });
}

export async function fanOut(runtime: FanoutDeps, logger: Logger, batch: FanoutBatch, lane: OrderLane): Promise<FanoutReport> {
  const report: FanoutReport = { failedRecordIds: [], posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const deliverablesBy = groupBy(batch.deliverables, (deliverable) => deliverable.tenant);
  const wakeUpsBy = groupBy(batch.wakeUps, (wake) => wake.key.tenant);
  const activitiesBy = groupBy(batch.activities, (activity) => activity.tenant);
  const tenants = new Set([...deliverablesBy.keys(), ...wakeUpsBy.keys(), ...activitiesBy.keys()]);
  const plans = new Map<string, ConnectionPlan>();
  const steps: LaneStep[] = [];
  await Promise.all(
    [...tenants].map(async (tenant) => {
      const deliverables = deliverablesBy.get(tenant) ?? [];
      const wakeUps = wakeUpsBy.get(tenant) ?? [];
      try {
        // Independent writes, side by side: a fresh session's first batch makes each of them once.
        const [{ ordered, tenantSteps }] = await Promise.all([
          orderTenant(runtime, lane, deliverables, wakeUps),
          claimSessions(runtime, deliverables),
          ...(activitiesBy.get(tenant) ?? []).map((activity) => runtime.sessionSummaries.fold(activity)),
        ]);
        const sessions = new Set<string>();
        const typeSegments = new Set<string>();
        for (const { event } of ordered) {
          if (event.session !== undefined) sessions.add(event.session);
          typeSegments.add(firstTypeSegment(event.type));
        }
        // Read only now: every release point this batch moved is committed (`order-lane.ts`).
        const subscriptions = ordered.length === 0 ? [] : await runtime.subscriptions.subscriptionsFor(tenant, [...sessions], [...typeSegments]);
        const tenantPlans = new Map<string, ConnectionPlan>();
        planTenant(tenant, ordered, subscriptions, tenantPlans);
        for (const [connectionId, plan] of tenantPlans) plans.set(connectionId, plan);
        steps.push(...tenantSteps);
      } catch (error) {
        logger.error('ordering, folding or reading subscriptions failed', { tenant, error });
        report.failedRecordIds.push(...deliverables.map((d) => d.recordId), ...wakeUps.map((w) => w.recordId));
      }
    }),
  );

  addCounts(report, await deliverInLanes(runtime, logger, plans));
  // Every delivery of those steps has ended: known delivered from now on (`order-lane.ts`). A
  // confirmation that fails costs duplicates at the next step, so it never fails the batch.
  await Promise.all(steps.map((step) => lane.confirm(step).catch((error: unknown) => logger.warn('could not confirm deliveries', { tenant: step.key.tenant, error }))));
  return report;
}

/**
 * One tenant's deliverables in delivery order: each emitter's session's releases (in its order)
 * take the place of its first record in the batch; seq-less and agent-scoped events keep theirs;
 * a redelivery goes out only once its position is known delivered (`OrderLane.isDelivered`).
 */
async function orderTenant(runtime: Pick<FanoutDeps, 'now' | 'sessionOwners' | 'knownOwners'>, lane: OrderLane, deliverables: readonly Deliverable[], wakeUps: readonly WakeUp[]): Promise<{ ordered: Deliverable[]; tenantSteps: LaneStep[] }> {
  const groups = new Map<string, { key: EmitterSession; records: LaneRecord[]; recordId: string; first?: AepEvent; wake?: OrderState }>();
  const slots: Array<Deliverable | string> = [];
  for (const deliverable of deliverables) {
    const key = emitterSessionOf(deliverable);
    const position = positionOf(deliverable.event);
    if (key === undefined || position === undefined) {
      slots.push(deliverable);
      continue;
    }
    const id = groupId(key);
    let group = groups.get(id);
    if (group === undefined) {
      group = { key, records: [], recordId: deliverable.recordId, first: deliverable.event };
      groups.set(id, group);
      slots.push(id);
    }
    // A redelivery is a record of its event too: the original's record may never have come
    // (the mapping discarded it: retries exhausted, or past its maximum age), and then its place lies in a hole and
    // this copy is the event's late arrival. It also keeps a slot of its own, after its session's
    // releases: forwarded as received (AEP-0003 §5) once its place is known delivered.
    group.records.push({ place: { epoch: position.epoch, seq: position.seq }, storedAtMs: deliverable.storedAtMs ?? runtime.now(), raw: deliverable.raw });
    if (deliverable.kind === 'redelivery') slots.push(deliverable);
  }
  for (const wake of wakeUps) {
    const id = groupId(wake.key);
    const group = groups.get(id);
    if (group === undefined) {
      groups.set(id, { key: wake.key, records: [], recordId: wake.recordId, wake: wake.state });
      slots.push(id);
    } else if (group.wake === undefined || wake.state.version > group.wake.version) group.wake = wake.state;
  }
  const tenantSteps: LaneStep[] = [];
  const released = new Map(
    await Promise.all(
      [...groups].map(async ([id, group]) => {
        // The session name's owner is its first emitter fan-out meets (`session-ownership.ts`).
        const [step] = await Promise.all([lane.step(group.key, group.records, group.wake), group.first === undefined ? undefined : settleOwner(runtime, group.key.tenant, group.first)]);
        tenantSteps.push(step);
        const out: Deliverable[] = [];
        for (const release of step.releases) {
          const event = parseStored(release.raw);
          if (event === undefined) continue;
          out.push({ recordId: group.recordId, tenant: group.key.tenant, raw: release.raw, event, kind: 'event', ...(release.late ? { late: true as const } : {}) });
        }
        return [id, out] as const;
      }),
    ),
  );
  const ordered: Deliverable[] = [];
  // What this batch has already put in line before a slot: a redelivery of one of those goes out after its original.
  const releasedBefore = new Map<string, Place>();
  for (const slot of slots) {
    if (typeof slot === 'string') {
      const releases = released.get(slot) ?? [];
      ordered.push(...releases);
      for (const release of releases) {
        const place = positionOf(release.event);
        const through = releasedBefore.get(slot);
        if (place !== undefined && (through === undefined || comparePlaces(place, through) > 0)) releasedBefore.set(slot, place);
      }
      continue;
    }
    const key = emitterSessionOf(slot);
    const position = positionOf(slot.event);
    if (slot.kind === 'redelivery' && key !== undefined && position !== undefined && !(await isDeliveredBefore(lane, releasedBefore, key, position))) continue;
    ordered.push(slot);
  }
  return { ordered, tenantSteps };
}

/** Whether the place is delivered, or put in line earlier in this batch (its run holds every place below it). */
async function isDeliveredBefore(lane: OrderLane, releasedBefore: ReadonlyMap<string, Place>, key: EmitterSession, place: Place): Promise<boolean> {
  const through = releasedBefore.get(groupId(key));
  if (through !== undefined && comparePlaces(place, through) <= 0) return true;
  return lane.isDelivered(key, place);
}

function emitterSessionOf(deliverable: Deliverable): EmitterSession | undefined {
  const { session, source } = deliverable.event;
  return typeof session === 'string' && typeof source === 'string' ? { tenant: deliverable.tenant, session, source } : undefined;
}

/** The items by key, each list in the items' order. */
function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}

function groupId(key: EmitterSession): string {
  return `${key.session}\u0000${key.source}`;
}
