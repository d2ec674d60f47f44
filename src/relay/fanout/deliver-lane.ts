/**
 * One lane's deliveries: its connections' planned actions run through the scheduler
 * (`delivery-pool.ts`), `fanout.concurrency` posts in flight, each connection's own actions one
 * after another in order. The same code runs in the fan-out invocation and in a lane worker.
 *
 * Each tenant has `fanout.tenantDeliveriesPerBatch` deliveries per lane run: lanes run side by
 * side, so the bound on how long one tenant's burst holds a batch is that many posts per lane
 * whatever the lane count (`connection-delivery.ts`, `TenantDeliveryBudget`).
 */
import type { Logger } from '../../observability/logger.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import { ConnectionDelivery, TenantDeliveryBudget } from './connection-delivery.ts';
import type { FanoutCounts } from './connection-delivery.ts';
import { runPool } from './delivery-pool.ts';
import { DeliveryTexts } from './delivery-plan.ts';
import type { ConnectionPlan } from './delivery-plan.ts';

export type LaneRuntime = Pick<RelayPorts, 'poster' | 'inbox' | 'parking' | 'connections' | 'subscriptions' | 'deadlines' | 'config' | 'now' | 'metrics'>;

export async function deliverLane(runtime: LaneRuntime, logger: Logger, plans: ReadonlyMap<string, ConnectionPlan>): Promise<FanoutCounts> {
  const counts: FanoutCounts = { posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const texts = new DeliveryTexts();
  const budgets = new Map<string, TenantDeliveryBudget>();
  const budgetOf = (tenant: string): TenantDeliveryBudget => {
    let budget = budgets.get(tenant);
    if (budget === undefined) {
      budget = new TenantDeliveryBudget(runtime.config.fanout.tenantDeliveriesPerBatch);
      budgets.set(tenant, budget);
    }
    return budget;
  };
  const deliveries = new Map<string, ConnectionDelivery>();
  for (const [connectionId, plan] of plans) deliveries.set(connectionId, new ConnectionDelivery(runtime, logger, plan, texts, counts, budgetOf(plan.tenant)));
  const queues = new Map([...plans].map(([connectionId, plan]) => [connectionId, plan.actions] as const));
  await runPool(queues, { concurrency: runtime.config.fanout.concurrency }, (connectionId, action) => (deliveries.get(connectionId) as ConnectionDelivery).run(action));
  return counts;
}

export function addCounts(into: FanoutCounts, counts: FanoutCounts): void {
  into.posted += counts.posted;
  into.dropped += counts.dropped;
  into.disconnected += counts.disconnected;
  into.closed += counts.closed;
}
