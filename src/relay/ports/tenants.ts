/** The tenant registry. */
import type { TenantRecord } from '../domain/tenant.ts';

export interface TenantsPort {
  /** Creates a tenant; false when it already exists. */
  createTenant(tenant: string): Promise<boolean>;
  getTenant(tenant: string): Promise<TenantRecord | undefined>;
  /** Every tenant, oldest id first (the operator's listing). */
  listTenants(): Promise<TenantRecord[]>;
  /** Disables or re-enables a tenant; false when there is no such tenant. */
  setTenantDisabled(tenant: string, disabled: boolean): Promise<boolean>;
}
