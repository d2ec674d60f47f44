/**
 * Tenant quotas: the settings, and the counters that enforce them without overshooting under
 * concurrent requests.
 */
import type { TenantQuotas } from '../tenant-quotas.ts';

export interface QuotasPort {
  quotasOf(tenant: string): Promise<TenantQuotas>;
  /** Replaces the tenant's quotas; false when there is no such tenant. */
  setQuotas(tenant: string, quotas: TenantQuotas): Promise<boolean>;
  /** Takes one connection slot; false when the tenant is at `max`. */
  acquireConnection(tenant: string, max: number): Promise<boolean>;
  releaseConnection(tenant: string): Promise<void>;
  /** Counts `count` events against this second's window; false when that would pass `perSecond`. */
  admitEvents(tenant: string, count: number, perSecond: number): Promise<boolean>;
}
