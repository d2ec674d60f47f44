/**
 * The tenant quota checks, one per kind, shared by every binding that enforces them
 * (connection slots, which are leases, have their own file: `connection-slots.ts`). Each
 * answers with the refusal's detail (the binding maps it to 429 or an in-band
 * `limit-exceeded`), or undefined when the quota allows the request.
 */
import type { QuotasPort } from '../ports/index.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { EventAllowance } from './event-allowance.ts';

type Quotas = QuotasPort;

/**
 * Takes `count` events off the tenant's events-per-second allowance (HTTP batch or socket
 * frame): its quota, else the deployment's default (`AEP_DEFAULT_EVENTS_PER_SECOND`, 0: none).
 */
export async function checkEventRate(runtime: Pick<RelayPorts, 'quotas' | 'config'> & { eventAllowance: EventAllowance }, tenant: string, count: number): Promise<string | undefined> {
  const perSecond = (await runtime.quotas.quotasOf(tenant)).eventsPerSecond ?? runtime.config.limits.defaultEventsPerSecond;
  if (perSecond === 0 || (await runtime.eventAllowance.admit(tenant, count, perSecond))) return undefined;
  return `the tenant's quota is ${perSecond} events per second; resend later with the same event ids`;
}

/** Most subscriptions one connection of the tenant may hold: its quota, else the deployment's limit. */
export async function subscriptionLimitOf(quotas: Quotas, tenant: string, deploymentLimit: number): Promise<number> {
  return (await quotas.quotasOf(tenant)).maxSubscriptionsPerConnection ?? deploymentLimit;
}

/** Most events one NDJSON batch of the tenant may carry: its quota, else the deployment's limit. */
export async function batchLimitOf(quotas: Quotas, tenant: string, deploymentLimit: number): Promise<number> {
  return (await quotas.quotasOf(tenant)).maxBatchEvents ?? deploymentLimit;
}
