/**
 * What an administrator can do to tenants, tokens and control policies, as one interface: the
 * admin service implements it over DynamoDB, the HTTP admin client over the admin routes, so
 * the CLI runs the same commands in both modes.
 */
import type { Principal } from '../auth/principal.ts';
import type { Scope } from '../auth/scopes.ts';
import type { ControlPolicy } from '../relay/control-policy.ts';

/** Response header of a token revocation: how many WebSocket connections it closed (a 204 has no body). */
export const CONNECTIONS_CLOSED_HEADER = 'aep-connections-closed';
/** Header listing (comma-separated `{tenant}/{tokenId}`) the tokens a revocation took with it. */
export const ALSO_REVOKED_HEADER = 'aep-also-revoked';

/** A token as listed: never its secret, never its digest. */
export interface TokenView {
  tokenId: string;
  tenant: string;
  scopes: Scope[];
  /** Identity binding: events whose `agent` is not listed are refused. */
  agents?: string[];
  label?: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  status: 'active' | 'expired' | 'revoked';
  /** `{tenant}/{tokenId}` of the token that issued this one; absent when AWS credentials did. */
  issuedBy?: string;
}

/** A freshly issued token: the one time its secret is ever shown. */
export interface IssuedToken extends TokenView {
  token: string;
  /** Set when the issue created the tenant (direct-mode bootstrap). */
  tenantCreated?: true;
}

export interface RotatedToken extends IssuedToken {
  /** The token this one replaces, now revoked. */
  replaces: string;
  /** WebSocket connections of the old token that were closed; null when they could not be reached. */
  connectionsClosed: number | null;
}

export interface TokenRevocation {
  tenant: string;
  tokenId: string;
  /** WebSocket connections of the token that were closed; null when they could not be reached. */
  connectionsClosed: number | null;
  /** Tokens revoked with it because it issued them (directly or further down), `{tenant}/{tokenId}`. */
  alsoRevoked: string[];
}

export interface TenantView {
  tenant: string;
  createdAt: string;
  disabled: boolean;
  hasControlPolicy: boolean;
}

export interface TenantStateChange {
  tenant: string;
  disabled: boolean;
  /** WebSocket connections of the tenant that were closed on disable; null when they could not be reached. */
  connectionsClosed: number | null;
}

export interface IssueTokenRequest {
  tenant: string;
  scopes: readonly Scope[];
  agents?: readonly string[];
  /** Lifetime from now; give this or `expiresAtMs`, not both. */
  expiresInSeconds?: number;
  /** Epoch milliseconds after which the token is refused. */
  expiresAtMs?: number;
  label?: string;
}

export interface IssueOptions {
  /** Creates the tenant first when it does not exist (the CLI's direct mode bootstraps a stack this way). */
  createTenant?: boolean;
  /** The token issuing (the admin routes): the grant is attenuated to it and it is recorded. */
  issuer?: Principal;
}

export interface RotateOptions {
  /** The token rotating (the admin routes): it may rotate only tokens no stronger than itself. */
  actor?: Principal;
}

export interface AdminOperations {
  createTenant(tenant: string): Promise<TenantView>;
  listTenants(): Promise<TenantView[]>;
  disableTenant(tenant: string): Promise<TenantStateChange>;
  enableTenant(tenant: string): Promise<TenantStateChange>;
  issueToken(request: IssueTokenRequest, options?: IssueOptions): Promise<IssuedToken>;
  listTokens(tenant: string): Promise<TokenView[]>;
  revokeToken(tenant: string, tokenId: string): Promise<TokenRevocation>;
  rotateToken(tenant: string, tokenId: string, options?: RotateOptions): Promise<RotatedToken>;
  getControlPolicy(tenant: string): Promise<ControlPolicy>;
  /** Validates (`parseControlPolicy`) and stores a policy document; returns it as stored. */
  setControlPolicy(tenant: string, document: unknown): Promise<ControlPolicy>;
}
