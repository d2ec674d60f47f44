/**
 * What an administrator can do to tenants, tokens and control policies, as one interface: the
 * admin service implements it over DynamoDB, the HTTP admin client over the admin routes, so
 * the CLI runs the same commands in both modes.
 */
import type { Principal } from '../auth/principal.ts';
import type { Scope } from '../auth/scopes.ts';
import type { Person } from '../auth/oidc/person.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { ControlPolicy } from '../relay/domain/control-policy.ts';
import type { TenantQuotas } from '../relay/domain/tenant-quotas.ts';

/** Response header of a token revocation: how many WebSocket connections it closed (a 204 has no body). */
export const CONNECTIONS_CLOSED_HEADER = 'aep-connections-closed';
/** Header listing (comma-separated `{tenant}/{tokenId}`) the tokens a revocation took with it. */
export const ALSO_REVOKED_HEADER = 'aep-also-revoked';
/** Response header of a token revocation: how many SSE streams it told to end (counted apart from sockets). */
export const STREAMS_ENDED_HEADER = 'aep-streams-ended';
/** Response header of a token revocation, present (`true`) when the token was revoked before this call. */
export const ALREADY_REVOKED_HEADER = 'aep-already-revoked';

/** A token as listed: never its secret, never its digest. */
export interface TokenView {
  tokenId: string;
  tenant: string;
  scopes: Scope[];
  /** Identity binding: events whose `agent` is not listed are refused. */
  agents?: string[];
  /** Its connections' identity cards must be this operator's (AEP-0003 §8.3). */
  operator?: string;
  label?: string;
  /** The highest capture level it reads events at; `full` for tokens stored before ceilings existed. */
  maxCapture: CaptureLevel;
  /** The id control policy rules name it by: its own id, or after rotation the first id of its chain. */
  lineage: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  status: 'active' | 'expired' | 'revoked';
  /** `{tenant}/{tokenId}` of the token that issued this one; absent when AWS credentials did. */
  issuedBy?: string;
  /** The person a team sign-in issued it to. */
  person?: Person;
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
  /** SSE streams of the old token told to end (each ends within one poll). */
  streamsEnded: number;
}

export interface TokenRevocation {
  tenant: string;
  tokenId: string;
  /** WebSocket connections of the token that were closed; null when they could not be reached. */
  connectionsClosed: number | null;
  /** SSE streams of the token told to end (each ends within one poll); never counted as connections closed. */
  streamsEnded: number;
  /** Tokens revoked with it because it issued them (directly or further down), `{tenant}/{tokenId}`. */
  alsoRevoked: string[];
  /** The token was revoked before this call: the call changed nothing about it (revocation is idempotent). */
  alreadyRevoked: boolean;
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
  /** SSE streams of the tenant told to end on disable. */
  streamsEnded: number;
  /** False when the tenant was already in the asked state (disabled, or enabled). */
  changed: boolean;
}

export interface IssueTokenRequest {
  tenant: string;
  scopes: readonly Scope[];
  agents?: readonly string[];
  /** The operator whose identity cards its connections may present (a card of another is refused). */
  operator?: string;
  /** Lifetime from now; give this or `expiresAtMs`, not both. */
  expiresInSeconds?: number;
  /** Epoch milliseconds after which the token is refused. */
  expiresAtMs?: number;
  /** Its capture ceiling; left open, the issuer's (or `full` where AWS credentials issue). */
  maxCapture?: CaptureLevel;
  label?: string;
}

export interface IssueOptions {
  /** Creates the tenant first when it does not exist (the CLI's direct mode bootstraps a stack this way). */
  createTenant?: boolean;
  /** The token issuing (the admin routes): the grant is attenuated to it and it is recorded. */
  issuer?: Principal;
}

/** The token acting (the admin routes); absent where AWS credentials act (the CLI's direct mode). */
export interface ActorOptions {
  /** It may act only on what it could have issued (`attenuation.ts`). */
  actor?: Principal;
}

/** The token rotating: it may rotate only tokens no stronger than itself. */
export type RotateOptions = ActorOptions;

/** A tenant's quotas as the operator set them. */
export interface QuotasView {
  tenant: string;
  /** What the operator set (absent members fall back to the deployment's limits). */
  quotas: TenantQuotas;
}

export interface AdminOperations {
  createTenant(tenant: string): Promise<TenantView>;
  listTenants(): Promise<TenantView[]>;
  disableTenant(tenant: string): Promise<TenantStateChange>;
  enableTenant(tenant: string): Promise<TenantStateChange>;
  issueToken(request: IssueTokenRequest, options?: IssueOptions): Promise<IssuedToken>;
  listTokens(tenant: string): Promise<TokenView[]>;
  revokeToken(tenant: string, tokenId: string, options?: ActorOptions): Promise<TokenRevocation>;
  rotateToken(tenant: string, tokenId: string, options?: RotateOptions): Promise<RotatedToken>;
  getControlPolicy(tenant: string): Promise<ControlPolicy>;
  /** Validates (`parseControlPolicy`) and stores a policy document; returns it as stored. */
  setControlPolicy(tenant: string, document: unknown, options?: ActorOptions): Promise<ControlPolicy>;
  getQuotas(tenant: string): Promise<QuotasView>;
  /** Validates (`parseTenantQuotas`) and replaces the tenant's quotas; `{}` clears them. */
  setQuotas(tenant: string, document: unknown): Promise<QuotasView>;
}
