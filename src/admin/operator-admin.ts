/**
 * Administration of the operators a tenant trusts to sign identity cards (AEP-0003 §8.3):
 * `GET /admin/operators`, `PUT /admin/operators/{name}` (`{ "jwks": {...} }` or
 * `{ "jwksUrl": "https://..." }`), `DELETE /admin/operators/{name}`. Trusting a key decides
 * whose claims the control policy believes for every token of the tenant, so changing the set
 * takes a tenant-wide admin token (`requireTenantWideAdmin`), like the control policy; any
 * admin token of the tenant may list it. Every change is written to the audit log (`AdminAudit`).
 */
import type { Principal } from '../auth/principal.ts';
import type { Person } from '../auth/oidc/person.ts';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import { MAX_OPERATORS, isOperatorName, parseOperatorSettings } from '../relay/identity/operator-settings.ts';
import type { Clock, OperatorsPort, TenantsPort, TrustedOperator } from '../relay/ports/index.ts';
import { invalidAdminRequest, operatorNotFound, tenantNotFound } from './admin-errors.ts';
import type { ActorOptions } from './admin-operations.ts';
import { requireTenantWideAdmin } from './attenuation.ts';

/** An operator as listed: its inline public keys, or its URL. */
export interface OperatorView {
  name: string;
  jwks?: unknown;
  jwksUrl?: string;
  updatedAt: string;
}

/** One admin change, for the audit log: who (token id, never its secret), what, on which tenant. */
export interface AdminAuditEntry {
  action: 'operator.put' | 'operator.delete';
  tenant: string;
  /** The acting token's `{tenant}/{tokenId}`; `aws-credentials` in the CLI's direct mode. */
  actor: string;
  operator: string;
  /** The signed-in person behind the acting token, when there is one. */
  person?: Person;
}

export type AdminAudit = (entry: AdminAuditEntry) => void;

/** The operator administration the CLI reaches over HTTP or directly. */
export interface OperatorOperations {
  listOperators(tenant: string): Promise<OperatorView[]>;
  putOperator(tenant: string, name: string, body: unknown, options?: ActorOptions): Promise<OperatorView>;
  removeOperator(tenant: string, name: string, options?: ActorOptions): Promise<void>;
}

export class OperatorAdmin implements OperatorOperations {
  constructor(
    private readonly deps: { operators: OperatorsPort; tenants: TenantsPort; addresses: AddressRule; now: Clock; audit: AdminAudit },
  ) {}

  async listOperators(tenant: string): Promise<OperatorView[]> {
    await this.requireTenant(tenant);
    return (await this.deps.operators.listOperators(tenant)).map(operatorViewOf);
  }

  async putOperator(tenant: string, name: string, body: unknown, options: ActorOptions = {}): Promise<OperatorView> {
    if (options.actor !== undefined) requireTenantWideAdmin(options.actor, "changing the tenant's trusted operators");
    await this.requireTenant(tenant);
    const parsed = parseOperatorSettings(name, body, this.deps.addresses, this.deps.now());
    if (!parsed.ok) throw invalidAdminRequest(`invalid operator: ${parsed.reason}`);
    const existing = await this.deps.operators.listOperators(tenant);
    if (existing.length >= MAX_OPERATORS && !existing.some((operator) => operator.name === name)) throw invalidAdminRequest(`a tenant trusts at most ${MAX_OPERATORS} operators`);
    await this.deps.operators.putOperator(tenant, parsed.operator);
    this.deps.audit({ action: 'operator.put', tenant, actor: actorOf(options.actor), operator: name, ...personOf(options.actor) });
    return operatorViewOf(parsed.operator);
  }

  async removeOperator(tenant: string, name: string, options: ActorOptions = {}): Promise<void> {
    if (options.actor !== undefined) requireTenantWideAdmin(options.actor, "changing the tenant's trusted operators");
    await this.requireTenant(tenant);
    if (!isOperatorName(name) || !(await this.deps.operators.deleteOperator(tenant, name))) throw operatorNotFound(name);
    this.deps.audit({ action: 'operator.delete', tenant, actor: actorOf(options.actor), operator: name, ...personOf(options.actor) });
  }

  private async requireTenant(tenant: string): Promise<void> {
    if (!isTenantId(tenant) || (await this.deps.tenants.getTenant(tenant)) === undefined) throw tenantNotFound(tenant);
  }
}

function personOf(actor: Principal | undefined): { person?: Person } {
  return actor?.person === undefined ? {} : { person: actor.person };
}

function actorOf(actor: Principal | undefined): string {
  return actor === undefined ? 'aws-credentials' : `${actor.tenant}/${actor.tokenId}`;
}

export function operatorViewOf(operator: TrustedOperator): OperatorView {
  return {
    name: operator.name,
    ...(operator.jwks === undefined ? {} : { jwks: JSON.parse(operator.jwks) as unknown }),
    ...(operator.jwksUrl === undefined ? {} : { jwksUrl: operator.jwksUrl }),
    updatedAt: new Date(operator.updatedAtMs).toISOString(),
  };
}
