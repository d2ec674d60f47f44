/**
 * The admin operations over a relay's admin routes, for the CLI's HTTP mode. A refusal comes
 * back as the RelayError the relay raised (same code, status and detail).
 */
import { RelayError } from '../errors/relay-error.ts';
import type { ControlPolicy } from '../relay/domain/control-policy.ts';
import { ALREADY_REVOKED_HEADER, ALSO_REVOKED_HEADER, CONNECTIONS_CLOSED_HEADER, STREAMS_ENDED_HEADER } from './admin-operations.ts';
import type { BridgeOperations, DeadLetterView, SinkSetChange } from './bridge-admin.ts';
import type { RedriveSchedule } from '../relay/bridges/redrive.ts';
import type { OperatorOperations, OperatorView } from './operator-admin.ts';
import type { SinkSettings } from '../relay/bridges/sink-settings.ts';
import type { AdminOperations, IssuedToken, IssueTokenRequest, QuotasView, RotatedToken, TenantStateChange, TenantView, TokenRevocation, TokenView } from './admin-operations.ts';


export class HttpAdminClient implements AdminOperations, BridgeOperations, OperatorOperations {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async createTenant(tenant: string): Promise<TenantView> {
    return (await this.call('POST', '/admin/tenants', { tenant })).json as TenantView;
  }

  async listTenants(): Promise<TenantView[]> {
    return ((await this.call('GET', '/admin/tenants')).json as { tenants: TenantView[] }).tenants;
  }

  async disableTenant(tenant: string): Promise<TenantStateChange> {
    return (await this.call('POST', `/admin/tenants/${encodeURIComponent(tenant)}/disable`)).json as TenantStateChange;
  }

  async enableTenant(tenant: string): Promise<TenantStateChange> {
    return (await this.call('POST', `/admin/tenants/${encodeURIComponent(tenant)}/enable`)).json as TenantStateChange;
  }

  /** An empty `tenant` means the admin token's own tenant. The admin API never creates tenants on issue. */
  async issueToken(request: IssueTokenRequest): Promise<IssuedToken> {
    const { tenant, expiresAtMs, ...rest } = request;
    if (expiresAtMs !== undefined) throw new RelayError('invalid-request', 400, 'the admin API takes expiresInSeconds, not an absolute expiry');
    return (await this.call('POST', '/admin/tokens', { ...rest, ...(tenant === '' ? {} : { tenant }) })).json as IssuedToken;
  }

  async listTokens(tenant: string): Promise<TokenView[]> {
    return ((await this.call('GET', `/admin/tokens${tenantQuery(tenant)}`)).json as { tokens: TokenView[] }).tokens;
  }

  async revokeToken(tenant: string, tokenId: string): Promise<TokenRevocation> {
    const { headers } = await this.call('DELETE', `/admin/tokens/${encodeURIComponent(tokenId)}${tenantQuery(tenant)}`);
    const closed = headers.get(CONNECTIONS_CLOSED_HEADER);
    const alsoRevoked = (headers.get(ALSO_REVOKED_HEADER) ?? '').split(',').filter((name) => name !== '');
    return {
      tenant,
      tokenId,
      connectionsClosed: closed === null ? null : Number(closed),
      streamsEnded: Number(headers.get(STREAMS_ENDED_HEADER) ?? 0),
      alsoRevoked,
      alreadyRevoked: headers.get(ALREADY_REVOKED_HEADER) === 'true',
    };
  }

  async rotateToken(tenant: string, tokenId: string): Promise<RotatedToken> {
    return (await this.call('POST', `/admin/tokens/${encodeURIComponent(tokenId)}/rotate${tenantQuery(tenant)}`)).json as RotatedToken;
  }

  async getControlPolicy(tenant: string): Promise<ControlPolicy> {
    return (await this.call('GET', `/admin/policy${tenantQuery(tenant)}`)).json as ControlPolicy;
  }

  async setControlPolicy(tenant: string, document: unknown): Promise<ControlPolicy> {
    return (await this.call('PUT', `/admin/policy${tenantQuery(tenant)}`, document)).json as ControlPolicy;
  }

  async getQuotas(tenant: string): Promise<QuotasView> {
    return (await this.call('GET', `/admin/quotas${tenantQuery(tenant)}`)).json as QuotasView;
  }

  async setQuotas(tenant: string, document: unknown): Promise<QuotasView> {
    return (await this.call('PUT', `/admin/quotas${tenantQuery(tenant)}`, document)).json as QuotasView;
  }

  async listSinks(tenant: string): Promise<SinkSettings[]> {
    return ((await this.call('GET', `/admin/bridges${tenantQuery(tenant)}`)).json as { sinks: SinkSettings[] }).sinks;
  }

  async setSinks(tenant: string, body: unknown): Promise<SinkSetChange> {
    return (await this.call('PUT', `/admin/bridges${tenantQuery(tenant)}`, body)).json as SinkSetChange;
  }

  async clearSinks(tenant: string): Promise<void> {
    await this.call('DELETE', `/admin/bridges${tenantQuery(tenant)}`);
  }

  async listDeadLetters(tenant: string): Promise<DeadLetterView[]> {
    return ((await this.call('GET', `/admin/bridges/dead-letters${tenantQuery(tenant)}`)).json as { deadLetters: DeadLetterView[] }).deadLetters;
  }

  async redrive(tenant: string): Promise<RedriveSchedule> {
    return (await this.call('POST', `/admin/bridges/dead-letters/redrive${tenantQuery(tenant)}`)).json as RedriveSchedule;
  }

  async listOperators(tenant: string): Promise<OperatorView[]> {
    return ((await this.call('GET', `/admin/operators${tenantQuery(tenant)}`)).json as { operators: OperatorView[] }).operators;
  }

  async putOperator(tenant: string, name: string, body: unknown): Promise<OperatorView> {
    return (await this.call('PUT', `/admin/operators/${encodeURIComponent(name)}${tenantQuery(tenant)}`, body)).json as OperatorView;
  }

  async removeOperator(tenant: string, name: string): Promise<void> {
    await this.call('DELETE', `/admin/operators/${encodeURIComponent(name)}${tenantQuery(tenant)}`);
  }

  /** The token's Web Push subscriptions (an admin token's: all of its tenant's), without keys. */
  async listPushSubscriptions(): Promise<unknown[]> {
    const { json } = await this.call('GET', '/push/subscriptions');
    return (json as { subscriptions: unknown[] }).subscriptions;
  }

  async removePushSubscription(id: string): Promise<void> {
    await this.call('DELETE', `/push/subscriptions/${encodeURIComponent(id)}`);
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ json: unknown; headers: Headers }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const fields = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
      const code = typeof fields.error === 'string' ? fields.error : 'http-error';
      const detail = typeof fields.detail === 'string' ? fields.detail : `${method} ${path} answered ${response.status}`;
      throw new RelayError(code, response.status, detail);
    }
    return { json, headers: response.headers };
  }
}

function tenantQuery(tenant: string): string {
  return tenant === '' ? '' : `?tenant=${encodeURIComponent(tenant)}`;
}
