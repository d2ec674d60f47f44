/**
 * Administration of a tenant's OpenID Connect provider (team sign-in):
 * `GET /admin/identity-provider`, `PUT /admin/identity-provider` (the document of
 * `identity-provider-settings.ts`), `DELETE /admin/identity-provider`. The provider and its role
 * rules decide who gets which grant in the tenant, so changing them takes a tenant-wide admin
 * token, like the control policy and the trusted operators; any admin token of the tenant may
 * read them (never the client secret: only whether one is set). Every change is audited with
 * the acting token and, for a signed-in admin, the person.
 */
import type { Principal } from '../auth/principal.ts';
import type { Person } from '../auth/oidc/person.ts';
import { parseIdentityProviderDocument } from '../auth/oidc/identity-provider-settings.ts';
import type { IdentityProviderSettings } from '../auth/oidc/identity-provider-settings.ts';
import type { RoleRuleSet } from '../auth/oidc/role-rules.ts';
import { CLIENT_SECRET_SEAL_NAME } from '../auth/oidc/sign-in-service.ts';
import type { IdentityProvidersPort } from '../auth/oidc/sign-in-ports.ts';
import { RelayError } from '../errors/relay-error.ts';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import type { Clock, SecretSealer, TenantsPort } from '../relay/ports/index.ts';
import { invalidAdminRequest, tenantNotFound } from './admin-errors.ts';
import type { ActorOptions } from './admin-operations.ts';
import { requireTenantWideAdmin } from './attenuation.ts';

/** The settings as listed: the secret never, only whether there is one. */
export interface IdentityProviderView {
  tenant: string;
  issuer: string;
  clientId: string;
  hasClientSecret: boolean;
  displayName: string;
  redirectUris: string[];
  scopes: string[];
  maxCredentialSeconds: number;
  ruleSet: RoleRuleSet;
  updatedAt: string;
}

/** One change of a tenant's identity provider, for the audit log. */
export interface IdentityProviderAuditEntry {
  action: 'identity-provider.put' | 'identity-provider.delete';
  tenant: string;
  /** The acting token's `{tenant}/{tokenId}`; `aws-credentials` in the CLI's direct mode. */
  actor: string;
  /** The signed-in person behind the acting token, when there is one. */
  person?: Person;
  issuer?: string;
}

export interface IdentityProviderOperations {
  getIdentityProvider(tenant: string): Promise<IdentityProviderView>;
  putIdentityProvider(tenant: string, body: unknown, options?: ActorOptions): Promise<IdentityProviderView>;
  removeIdentityProvider(tenant: string, options?: ActorOptions): Promise<void>;
}

export class IdentityProviderAdmin implements IdentityProviderOperations {
  constructor(
    private readonly deps: { providers: IdentityProvidersPort; tenants: Pick<TenantsPort, 'getTenant'>; sealer: SecretSealer; addresses: AddressRule; now: Clock; audit: (entry: IdentityProviderAuditEntry) => void },
  ) {}

  async getIdentityProvider(tenant: string): Promise<IdentityProviderView> {
    await this.requireTenant(tenant);
    const settings = await this.deps.providers.getSettings(tenant);
    if (settings === undefined) throw noProvider(tenant);
    return viewOf(tenant, settings);
  }

  async putIdentityProvider(tenant: string, body: unknown, options: ActorOptions = {}): Promise<IdentityProviderView> {
    if (options.actor !== undefined) requireTenantWideAdmin(options.actor, "changing the tenant's identity provider");
    await this.requireTenant(tenant);
    const parsed = parseIdentityProviderDocument(body, this.deps.addresses);
    if (!parsed.ok) throw invalidAdminRequest(`invalid identity provider: ${parsed.reason}`);
    const { clientSecret, ...document } = parsed.value;
    const sealedClientSecret = clientSecret === undefined ? undefined : await this.deps.sealer.seal(clientSecret, { tenant, sink: CLIENT_SECRET_SEAL_NAME });
    const settings: IdentityProviderSettings = { ...document, updatedAtMs: this.deps.now(), ...(sealedClientSecret === undefined ? {} : { sealedClientSecret }) };
    await this.deps.providers.putSettings(tenant, settings);
    this.deps.audit({ action: 'identity-provider.put', tenant, ...actorOf(options.actor), issuer: settings.issuer });
    return viewOf(tenant, settings);
  }

  async removeIdentityProvider(tenant: string, options: ActorOptions = {}): Promise<void> {
    if (options.actor !== undefined) requireTenantWideAdmin(options.actor, "changing the tenant's identity provider");
    await this.requireTenant(tenant);
    if (!(await this.deps.providers.deleteSettings(tenant))) throw noProvider(tenant);
    this.deps.audit({ action: 'identity-provider.delete', tenant, ...actorOf(options.actor) });
  }

  private async requireTenant(tenant: string): Promise<void> {
    if (!isTenantId(tenant) || (await this.deps.tenants.getTenant(tenant)) === undefined) throw tenantNotFound(tenant);
  }
}

const noProvider = (tenant: string) => new RelayError('not-found', 404, `tenant ${tenant} has no identity provider set`);

function actorOf(actor: Principal | undefined): { actor: string; person?: Person } {
  if (actor === undefined) return { actor: 'aws-credentials' };
  return { actor: `${actor.tenant}/${actor.tokenId}`, ...(actor.person === undefined ? {} : { person: actor.person }) };
}

function viewOf(tenant: string, settings: IdentityProviderSettings): IdentityProviderView {
  return {
    tenant,
    issuer: settings.issuer,
    clientId: settings.clientId,
    hasClientSecret: settings.sealedClientSecret !== undefined,
    displayName: settings.displayName,
    redirectUris: [...settings.redirectUris],
    scopes: [...settings.scopes],
    maxCredentialSeconds: settings.maxCredentialSeconds,
    ruleSet: settings.ruleSet,
    updatedAt: new Date(settings.updatedAtMs).toISOString(),
  };
}
