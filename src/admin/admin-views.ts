/** How stored tenants and tokens are shown to administrators: ISO times, a status, no digests. */
import { SCOPES } from '../auth/scopes.ts';
import type { TenantRecord, TokenRecord } from '../relay/domain/tenant.ts';
import type { TenantView, TokenView } from './admin-operations.ts';

export function tokenViewOf(record: TokenRecord, nowMs: number): TokenView {
  const status = record.revokedAtMs !== undefined ? 'revoked' : record.expiresAtMs !== undefined && record.expiresAtMs <= nowMs ? 'expired' : 'active';
  return {
    tokenId: record.tokenId,
    tenant: record.tenant,
    // DynamoDB string sets come back unordered; show scopes in their documented order.
    scopes: SCOPES.filter((scope) => record.scopes.includes(scope)),
    ...(record.agents === undefined ? {} : { agents: [...record.agents] }),
    ...(record.operator === undefined ? {} : { operator: record.operator }),
    ...(record.label === undefined ? {} : { label: record.label }),
    maxCapture: record.maxCapture ?? 'full',
    lineage: record.lineage ?? record.tokenId,
    createdAt: new Date(record.createdAtMs).toISOString(),
    ...(record.expiresAtMs === undefined ? {} : { expiresAt: new Date(record.expiresAtMs).toISOString() }),
    ...(record.revokedAtMs === undefined ? {} : { revokedAt: new Date(record.revokedAtMs).toISOString() }),
    status,
    ...(record.issuedBy === undefined ? {} : { issuedBy: `${record.issuedBy.tenant}/${record.issuedBy.tokenId}` }),
    ...(record.person === undefined ? {} : { person: record.person }),
  };
}

export function tenantViewOf(record: TenantRecord): TenantView {
  return {
    tenant: record.tenant,
    createdAt: new Date(record.createdAtMs).toISOString(),
    disabled: record.disabled,
    hasControlPolicy: record.controlPolicy !== undefined,
  };
}
