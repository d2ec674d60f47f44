/**
 * Fan-out of a batch of stream records to WebSocket subscribers and SSE inboxes (AEP-0003 §5,
 * §6, §8.4).
 *
 * Cost shape: subscriptions are read once per batch and tenant, and only those that could
 * match: the tenant's unconstrained ones, those pinned to a session in the batch, and those
 * indexed under a first type segment (`tool`, `progress`) the batch's events carry. A tenant's
 * subscriptions filtered to other sessions or other types are never read.
 *
 * Order: late arrivals (events stored after a higher one of their session) are recorded first,
 * then each session's top moves past the batch, so resume misses none (`late-arrivals.ts`); then each session's events are put in `(epoch,
 * seq)` order, waiting a bounded time for missing positions (`session-sequencer.ts`).
 *
 * Speed: each connection's deliveries run one after another in that order; `fanout.concurrency` posts are in flight
 * over all connections, scheduled without head-of-line blocking (`delivery-pool.ts`).
 *
 * Failure isolation: a gone connection (410) has its state removed; a slow one is handled by
 * the backpressure rule (`connection-delivery.ts`). Neither fails the batch. Only a failure to
 * fold the sessions' summaries (they hold the top replay serves up to), record late arrivals,
 * order, or read subscriptions reports records back (`failedRecordIds`, which the handler returns as
 * `batchItemFailures`), so the event source mapping retries them.
 */
import { firstTypeSegment } from '../../protocol/attr-match.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { SessionActivity } from '../domain/history.ts';
import type { RelayRuntime } from '../runtime.ts';
import { ConnectionDelivery } from './connection-delivery.ts';
import type { FanoutCounts } from './connection-delivery.ts';
import { runPool } from './delivery-pool.ts';
import { DeliveryTexts, planTenant } from './delivery-plan.ts';
import { LateArrivals } from './late-arrivals.ts';
import { forwardable } from './redelivery-gate.ts';
import { SessionSequencer } from './session-sequencer.ts';
import type { ConnectionPlan } from './delivery-plan.ts';

export interface FanoutReport extends FanoutCounts {
  /** Ids of the deliverables to hand back for a retry, every one whose subscriptions could not be read. */
  failedRecordIds: string[];
}

/** What fan-out keeps between batches in one container (`late-arrivals.ts`, `session-sequencer.ts`). */
export interface FanoutOrdering {
  lateArrivals: LateArrivals;
  sequencer: SessionSequencer;
}

export function createFanoutOrdering(runtime: Pick<RelayRuntime, 'eventLog' | 'sessionSummaries' | 'now' | 'config'>): FanoutOrdering {
  return {
    lateArrivals: new LateArrivals({ eventLog: runtime.eventLog, summaries: runtime.sessionSummaries }),
    sequencer: new SessionSequencer({ eventLog: runtime.eventLog, now: runtime.now, orderWaitMs: runtime.config.fanout.orderWaitMs }),
  };
}

/** `activities`: what the batch stored per session, folded into the session summaries (`late-arrivals.ts`). */
export async function fanOut(runtime: RelayRuntime, logger: Logger, deliverables: readonly Deliverable[], ordering: FanoutOrdering, activities: readonly SessionActivity[]): Promise<FanoutReport> {
  const report: FanoutReport = { failedRecordIds: [], posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const byTenant = new Map<string, Deliverable[]>();
  for (const deliverable of deliverables) {
    const list = byTenant.get(deliverable.tenant);
    if (list === undefined) byTenant.set(deliverable.tenant, [deliverable]);
    else list.push(deliverable);
  }
  // A tenant whose batch holds only what is not delivered still has its summaries to fold.
  for (const activity of activities) if (!byTenant.has(activity.tenant)) byTenant.set(activity.tenant, []);

  const plans = new Map<string, ConnectionPlan>();
  const failed: Deliverable[] = [];
  await Promise.all(
    [...byTenant].map(async ([tenant, tenantDeliverables]) => {
      const sessions = new Set<string>();
      const typeSegments = new Set<string>();
      for (const { event } of tenantDeliverables) {
        if (event.session !== undefined) sessions.add(event.session);
        typeSegments.add(firstTypeSegment(event.type));
      }
      try {
        // Late arrivals are on record, and the sessions' tops moved, before any subscription is read (`late-arrivals.ts`).
        const { late, freshSessions } = await ordering.lateArrivals.record(tenant, tenantDeliverables, activities);
        const ordered = await ordering.sequencer.order(tenant, await forwardable(runtime.eventLog, tenant, tenantDeliverables), freshSessions);
        const subscriptions = await runtime.subscriptions.subscriptionsFor(tenant, [...sessions], [...typeSegments]);
        const tenantPlans = new Map<string, ConnectionPlan>();
        planTenant(tenant, ordered, subscriptions, tenantPlans, (deliverable) => ordering.sequencer.alreadyGiven(deliverable), late);
        ordering.sequencer.remember(ordered, tenantPlans.values());
        for (const [connectionId, plan] of tenantPlans) plans.set(connectionId, plan);
      } catch (error) {
        logger.error('folding sessions, recording late arrivals, ordering or reading subscriptions failed', { tenant, error });
        failed.push(...tenantDeliverables);
      }
    }),
  );

  const texts = new DeliveryTexts();
  const deliveries = new Map<string, ConnectionDelivery>();
  for (const [connectionId, plan] of plans) deliveries.set(connectionId, new ConnectionDelivery(runtime, logger, plan, texts, report));
  const queues = new Map([...plans].map(([connectionId, plan]) => [connectionId, plan.actions] as const));
  await runPool(queues, { concurrency: runtime.config.fanout.concurrency }, (connectionId, action) => (deliveries.get(connectionId) as ConnectionDelivery).run(action));

  // Lambda resumes from the lowest reported sequence number; report every failed record.
  report.failedRecordIds = failed.map((deliverable) => deliverable.recordId);
  return report;
}
