/**
 * Fan-out of a batch of stream records to WebSocket subscribers and SSE inboxes (AEP-0003 §5,
 * §6, §8.4).
 *
 * Cost shape: subscriptions are read once per batch and tenant, and only those that could
 * match: the tenant's unconstrained ones, those pinned to a session in the batch, and those
 * indexed under a first type segment (`tool`, `progress`) the batch's events carry. A tenant's
 * subscriptions filtered to other sessions or other types are never read.
 *
 * Order and speed: each connection's deliveries run one after another in stream order (which
 * follows `(epoch, seq)` arrival order per session); `fanout.concurrency` posts are in flight
 * over all connections, scheduled without head-of-line blocking (`delivery-pool.ts`).
 *
 * Failure isolation: a gone connection (410) has its state removed; a slow one is handled by
 * the backpressure rule (`connection-delivery.ts`). Neither fails the batch. Only a failure to
 * read subscriptions reports records back (`failedRecordIds`, which the handler returns as
 * `batchItemFailures`), so the event source mapping retries them.
 */
import { firstTypeSegment } from '../../protocol/attr-match.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { RelayRuntime } from '../runtime.ts';
import { ConnectionDelivery } from './connection-delivery.ts';
import type { FanoutCounts } from './connection-delivery.ts';
import { runPool } from './delivery-pool.ts';
import { DeliveryTexts, planTenant } from './delivery-plan.ts';
import type { ConnectionPlan } from './delivery-plan.ts';

export interface FanoutReport extends FanoutCounts {
  /** Ids of the deliverables to hand back for a retry, every one whose subscriptions could not be read. */
  failedRecordIds: string[];
}

export async function fanOut(runtime: RelayRuntime, logger: Logger, deliverables: readonly Deliverable[]): Promise<FanoutReport> {
  const report: FanoutReport = { failedRecordIds: [], posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const byTenant = new Map<string, Deliverable[]>();
  for (const deliverable of deliverables) {
    const list = byTenant.get(deliverable.tenant);
    if (list === undefined) byTenant.set(deliverable.tenant, [deliverable]);
    else list.push(deliverable);
  }

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
        const subscriptions = await runtime.subscriptions.subscriptionsFor(tenant, [...sessions], [...typeSegments]);
        planTenant(tenant, tenantDeliverables, subscriptions, plans);
      } catch (error) {
        logger.error('reading subscriptions failed', { tenant, error });
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
