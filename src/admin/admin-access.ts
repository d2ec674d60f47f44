/**
 * Who may administer what. A token with the `admin` scope manages its own tenant (tokens and
 * control policy); an admin token of the operator tenant also manages tenants, and a
 * tenant-wide one (`attenuation.ts`) may act on any tenant's tokens and policy by naming it.
 */
import { hasScope } from '../auth/principal.ts';
import type { Principal } from '../auth/principal.ts';
import { forbidden, RelayError } from '../errors/relay-error.ts';
import { requireTenantWideAdmin } from './attenuation.ts';

export function requireAdmin(principal: Principal): void {
  if (!hasScope(principal, 'admin')) throw forbidden('this token lacks the admin scope');
}

export function isOperator(principal: Principal, operatorTenant: string): boolean {
  return hasScope(principal, 'admin') && principal.tenant === operatorTenant;
}

/** Tenant lifecycle is the operator's alone. */
export function requireOperator(principal: Principal, operatorTenant: string): void {
  requireAdmin(principal);
  if (!isOperator(principal, operatorTenant)) throw forbidden('managing tenants needs an admin token of the operator tenant');
}

/**
 * Quotas bound what a tenant may cost the deployment, so they are the operator's to set: a
 * tenant's own admin, however strong, never raises its own (on a hosted relay the tenant is
 * not the one paying for the shared lanes). Setting them needs a tenant-wide admin token of
 * the operator tenant (or AWS credentials, the CLI's direct mode); a tenant admin may read its own.
 */
export function requireQuotaSetter(principal: Principal, operatorTenant: string): void {
  requireAdmin(principal);
  if (!isOperator(principal, operatorTenant)) throw forbidden("tenant quotas are set by the operator: this needs an admin token of the operator tenant, not the tenant's own");
  requireTenantWideAdmin(principal, 'setting tenant quotas');
}

/**
 * The tenant a self-service request acts on: the caller's own, or the one a tenant-wide operator
 * admin names. Attenuation compares grants within one tenant and has no tenant dimension, so an
 * operator token bound to an agent, expiring, or capped would otherwise reach every tenant
 * unbounded there (issuing itself a full-capture consume token of any of them).
 */
export function targetTenant(principal: Principal, operatorTenant: string, requested: string | undefined): string {
  requireAdmin(principal);
  if (requested === undefined || requested === principal.tenant) return principal.tenant;
  if (!isOperator(principal, operatorTenant)) throw forbidden("only the operator tenant may manage another tenant's tokens and policy");
  requireTenantWideAdmin(principal, 'acting on another tenant');
  return requested;
}

/** The operator may not disable its own tenant over HTTP: it would lock itself out (the CLI's direct mode still can). */
export function requireNotSelfLockout(principal: Principal, tenant: string): void {
  if (tenant === principal.tenant) throw new RelayError('operator-lockout', 409, 'the operator tenant cannot disable itself over the admin API; use the CLI in direct mode');
}
