/**
 * Tenant and token administration over the tenant, token and policy ports. Revoking or
 * rotating a token also ends its open connections (`relay/revocation.ts`), so a revoked token
 * stops working at once: new requests are refused by the next lookup, open sockets get a
 * `closing` frame and are closed before the call returns, open SSE streams are told through
 * their inbox and end within a poll. Disabling a tenant does the same for every token of it.
 */
import { hashTokenSecret, mintTokenSecret } from '../auth/token-secret.ts';
import { DEFAULT_CONTROL_POLICY, parseControlPolicy } from '../relay/domain/control-policy.ts';
import type { ControlPolicy } from '../relay/domain/control-policy.ts';
import { endConnectionsOfToken } from '../relay/connections/revocation.ts';
import type { EndReason } from '../relay/connections/revocation.ts';
import type { RelayPorts } from '../relay/ports/relay-ports.ts';
import type { RevocationDeps } from '../relay/connections/revocation.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import type { TokenGrant, TokenRecord } from '../relay/domain/tenant.ts';
import type { Clock, ControlPoliciesPort, IdMinter, QuotasPort, TenantsPort, TokensPort } from '../relay/ports/index.ts';
import { parseTenantQuotas } from '../relay/domain/tenant-quotas.ts';
import { invalidAdminRequest, tenantExists, tenantNotFound, tokenInactive, tokenNotFound } from './admin-errors.ts';
import type { ActorOptions, AdminOperations, IssuedToken, IssueOptions, IssueTokenRequest, QuotasView, RotatedToken, RotateOptions, TenantStateChange, TenantView, TokenRevocation, TokenView } from './admin-operations.ts';
import { tenantViewOf, tokenViewOf } from './admin-views.ts';
import { attenuate, requireTenantWideAdmin } from './attenuation.ts';
import { policyNamingLineages } from './policy-lineage.ts';
import { grantOf } from './issue-request.ts';

export interface AdminDependencies {
  tenants: TenantsPort;
  tokens: TokensPort;
  controlPolicies: ControlPoliciesPort;
  /** Where tenant quotas are kept; absent where the CLI cannot reach them (quota commands then refuse). */
  quotas?: Pick<QuotasPort, 'quotasOf' | 'setQuotas'>;
  mintId: IdMinter;
  now: Clock;
  /**
   * Ends a token's open WebSocket connections and SSE streams, counting each kind; `sockets` is
   * null when the sockets cannot be reached (no management endpoint). Absent where neither can.
   */
  closeConnectionsOfToken?: (tenant: string, tokenId: string, reason: EndReason) => Promise<ConnectionsReached>;
}

/** What ending a token's connections reached: sockets closed (null: unreachable from here) and streams told to end. */
export interface ConnectionsReached {
  sockets: number | null;
  streams: number;
}

const NOTHING_REACHED: ConnectionsReached = { sockets: null, streams: 0 };

export class AdminService implements AdminOperations {
  constructor(private readonly deps: AdminDependencies) {}

  async createTenant(tenant: string): Promise<TenantView> {
    requireTenantId(tenant);
    if (!(await this.deps.tenants.createTenant(tenant))) throw tenantExists(tenant);
    return tenantViewOf(await this.existingTenant(tenant));
  }

  async listTenants(): Promise<TenantView[]> {
    return (await this.deps.tenants.listTenants()).map(tenantViewOf);
  }

  /**
   * New requests of the tenant's tokens are refused from the next lookup; open sockets are
   * closed and streams told to end (again, for an already disabled tenant: `changed` false).
   */
  async disableTenant(tenant: string): Promise<TenantStateChange> {
    requireTenantId(tenant);
    const wasDisabled = (await this.existingTenant(tenant)).disabled;
    if (!(await this.deps.tenants.setTenantDisabled(tenant, true))) throw tenantNotFound(tenant);
    const tokens = await this.deps.tokens.listTokens(tenant);
    const reached = await Promise.all(tokens.map((token) => this.closeConnections(tenant, token.tokenId, 'tenant-disabled')));
    const sockets = reached.some((each) => each.sockets === null) ? null : reached.reduce((sum, each) => sum + (each.sockets ?? 0), 0);
    return { tenant, disabled: true, connectionsClosed: sockets, streamsEnded: reached.reduce((sum, each) => sum + each.streams, 0), changed: !wasDisabled };
  }

  async enableTenant(tenant: string): Promise<TenantStateChange> {
    requireTenantId(tenant);
    const wasDisabled = (await this.existingTenant(tenant)).disabled;
    if (!(await this.deps.tenants.setTenantDisabled(tenant, false))) throw tenantNotFound(tenant);
    return { tenant, disabled: false, connectionsClosed: 0, streamsEnded: 0, changed: wasDisabled };
  }

  /** Mints a token; its secret is in the result only and is stored as its SHA-256 digest. */
  async issueToken(request: IssueTokenRequest, options: IssueOptions = {}): Promise<IssuedToken> {
    requireTenantId(request.tenant);
    const requested = grantOf(request, this.deps.now());
    const { issuer } = options;
    // Every new token states its ceiling: left open where AWS credentials issue, it reads at full.
    const grant = issuer === undefined ? { maxCapture: 'full' as const, ...requested } : { ...attenuate(issuer, requested, 'issue'), issuedBy: { tenant: issuer.tenant, tokenId: issuer.tokenId } };
    const tenantCreated = options.createTenant === true && (await this.deps.tenants.createTenant(request.tenant));
    if (!tenantCreated) await this.existingTenant(request.tenant);
    const { token, record } = await this.mint(grant);
    return { ...tokenViewOf(record, this.deps.now()), token, ...(tenantCreated ? { tenantCreated: true as const } : {}) };
  }

  /** Stores a new token for a checked grant; its secret is returned once and stored as its SHA-256 digest. */
  private async mint(grant: Omit<TokenGrant, 'tokenId'>): Promise<{ token: string; record: TokenRecord }> {
    const tokenId = `tok_${this.deps.mintId()}`;
    const token = mintTokenSecret();
    await this.deps.tokens.putToken({ ...grant, tokenId }, hashTokenSecret(token));
    const record = await this.deps.tokens.getToken(grant.tenant, tokenId);
    if (record === undefined) throw new Error(`token ${tokenId} was written but cannot be read back`);
    return { token, record };
  }

  async listTokens(tenant: string): Promise<TokenView[]> {
    requireTenantId(tenant);
    await this.existingTenant(tenant);
    const now = this.deps.now();
    return (await this.deps.tokens.listTokens(tenant)).map((record) => tokenViewOf(record, now));
  }

  /**
   * Idempotent: revoking a revoked token succeeds again (and closes anything still open), and
   * says so (`alreadyRevoked`). Cascades: every token it issued, and every token those issued,
   * is revoked too, so an admin token's revocation takes what it minted with it.
   */
  async revokeToken(tenant: string, tokenId: string, options: ActorOptions = {}): Promise<TokenRevocation> {
    requireTenantId(tenant);
    const target = await this.deps.tokens.getToken(tenant, tokenId);
    if (target === undefined) throw tokenNotFound(tokenId);
    // A token revokes only what it could have issued: otherwise a bound or short-lived admin
    // could revoke the tenant's root admin and, by the cascade, everything that one issued.
    // What the target issued is within the target (issuance attenuates), so within the caller.
    if (options.actor !== undefined) attenuate(options.actor, target, 'cover');
    if (!(await this.deps.tokens.revokeToken(tenant, tokenId))) throw tokenNotFound(tokenId);
    const ended = await this.closeConnections(tenant, tokenId, 'token-revoked');
    const alsoRevoked: string[] = [];
    const seen = new Set([`${tenant}/${tokenId}`]);
    const pending = await this.deps.tokens.issuedBy({ tenant, tokenId });
    for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
      const name = `${next.tenant}/${next.tokenId}`;
      if (seen.has(name)) continue;
      seen.add(name);
      if (!(await this.deps.tokens.revokeToken(next.tenant, next.tokenId))) continue;
      await this.closeConnections(next.tenant, next.tokenId, 'token-revoked');
      alsoRevoked.push(name);
      pending.push(...(await this.deps.tokens.issuedBy(next)));
    }
    return { tenant, tokenId, connectionsClosed: ended.sockets, streamsEnded: ended.streams, alsoRevoked, alreadyRevoked: target.revokedAtMs !== undefined };
  }

  /** A new secret with the same grant (scopes, agents, expiry, label); the old token is revoked. */
  async rotateToken(tenant: string, tokenId: string, options: RotateOptions = {}): Promise<RotatedToken> {
    requireTenantId(tenant);
    const old = await this.deps.tokens.getToken(tenant, tokenId);
    if (old === undefined) throw tokenNotFound(tokenId);
    const oldView = tokenViewOf(old, this.deps.now());
    if (oldView.status !== 'active') throw tokenInactive(tokenId, oldView.status);
    // Rotating hands out a secret: the rotating token may do that only for a grant within its own.
    if (options.actor !== undefined) attenuate(options.actor, old, 'cover');
    // The replacement exists before the old token stops, so a client switching over never has
    // neither. It keeps the old token's issuer and takes over what the old one issued, so
    // revocation cascades exactly as before; the old one is revoked without the cascade. It
    // keeps the old one's lineage too (its first id), the name policy rules match it by.
    const { token, record } = await this.mint({ ...grantFieldsOf(old), lineage: old.lineage ?? old.tokenId, ...(old.issuedBy === undefined ? {} : { issuedBy: old.issuedBy }) });
    for (const child of await this.deps.tokens.issuedBy({ tenant, tokenId })) await this.deps.tokens.linkIssued({ tenant, tokenId: record.tokenId }, child);
    if (!(await this.deps.tokens.revokeToken(tenant, tokenId))) throw tokenNotFound(tokenId);
    const ended = await this.closeConnections(tenant, tokenId, 'token-revoked');
    return { ...tokenViewOf(record, this.deps.now()), token, replaces: tokenId, connectionsClosed: ended.sockets, streamsEnded: ended.streams };
  }

  async getControlPolicy(tenant: string): Promise<ControlPolicy> {
    requireTenantId(tenant);
    const record = await this.existingTenant(tenant);
    if (record.controlPolicy === undefined) return DEFAULT_CONTROL_POLICY;
    const parsed = parseControlPolicy(JSON.parse(record.controlPolicy));
    // Routing fails closed on a stored policy that no longer parses (route-command.ts); show that.
    return parsed.ok ? parsed.policy : { default: 'deny', rules: [] };
  }

  /**
   * The policy governs every token of the tenant, so only a tenant-wide admin token sets it
   * (`requireTenantWideAdmin`). A rule naming a rotated token by its current id is stored
   * naming its lineage, the one name that survives the next rotation (`policy-lineage.ts`).
   */
  async setControlPolicy(tenant: string, document: unknown, options: ActorOptions = {}): Promise<ControlPolicy> {
    requireTenantId(tenant);
    if (options.actor !== undefined) requireTenantWideAdmin(options.actor, "setting the tenant's control policy");
    const parsed = parseControlPolicy(document);
    if (!parsed.ok) throw invalidAdminRequest(`invalid control policy: ${parsed.reason}`);
    await this.existingTenant(tenant);
    const policy = policyNamingLineages(parsed.policy, await this.deps.tokens.listTokens(tenant));
    if (!(await this.deps.controlPolicies.setControlPolicy(tenant, JSON.stringify(policy)))) throw tenantNotFound(tenant);
    return policy;
  }

  async getQuotas(tenant: string): Promise<QuotasView> {
    requireTenantId(tenant);
    await this.existingTenant(tenant);
    return { tenant, quotas: await this.quotaStore().quotasOf(tenant) };
  }

  /** Replaces the tenant's quotas whole (`{}` clears them). Who may is the caller's decision: the operator's alone (admin-access.ts). */
  async setQuotas(tenant: string, document: unknown): Promise<QuotasView> {
    requireTenantId(tenant);
    const parsed = parseTenantQuotas(document);
    if (!parsed.ok) throw invalidAdminRequest(`invalid quotas: ${parsed.reason}`);
    if (!(await this.quotaStore().setQuotas(tenant, parsed.quotas))) throw tenantNotFound(tenant);
    return { tenant, quotas: parsed.quotas };
  }

  private quotaStore(): Pick<QuotasPort, 'quotasOf' | 'setQuotas'> {
    if (this.deps.quotas === undefined) throw invalidAdminRequest('tenant quotas are not reachable from here');
    return this.deps.quotas;
  }

  private async existingTenant(tenant: string) {
    const record = await this.deps.tenants.getTenant(tenant);
    if (record === undefined) throw tenantNotFound(tenant);
    return record;
  }

  private async closeConnections(tenant: string, tokenId: string, reason: EndReason): Promise<ConnectionsReached> {
    return this.deps.closeConnectionsOfToken === undefined ? NOTHING_REACHED : this.deps.closeConnectionsOfToken(tenant, tokenId, reason);
  }
}

/**
 * The admin service of a relay runtime. Sockets are closed only where the runtime can post to
 * them (without a management endpoint, removing their state would leave them open); streams
 * are always told.
 */
export function adminServiceFor(runtime: RevocationDeps & Pick<RelayPorts, 'config' | 'controlPolicies' | 'mintId' | 'now' | 'quotas' | 'tenants'>): AdminService {
  return new AdminService({
    tenants: runtime.tenants,
    tokens: runtime.tokens,
    controlPolicies: runtime.controlPolicies,
    quotas: runtime.quotas,
    mintId: runtime.mintId,
    now: runtime.now,
    closeConnectionsOfToken: async (tenant, tokenId, reason) => {
      const sockets = runtime.config.managementEndpoint !== undefined;
      const reached = await endConnectionsOfToken(runtime, tenant, tokenId, reason, { sockets });
      return { sockets: sockets ? reached.sockets : null, streams: reached.streams };
    },
  });
}

function requireTenantId(tenant: string): void {
  if (!isTenantId(tenant)) throw invalidAdminRequest(`${JSON.stringify(tenant)} is not a tenant id: 1 to 40 of a-z, 0-9 and -, starting and ending with a letter or digit`);
}

/** The grant members of a stored token (what rotation keeps). */
function grantFieldsOf(record: TokenRecord): Omit<TokenGrant, 'tokenId'> {
  return {
    tenant: record.tenant,
    scopes: record.scopes,
    ...(record.agents === undefined ? {} : { agents: record.agents }),
    ...(record.operator === undefined ? {} : { operator: record.operator }),
    ...(record.expiresAtMs === undefined ? {} : { expiresAtMs: record.expiresAtMs }),
    ...(record.label === undefined ? {} : { label: record.label }),
    // A token stored before ceilings existed reads at full; its replacement says so.
    maxCapture: record.maxCapture ?? 'full',
  };
}
