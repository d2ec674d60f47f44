/**
 * Tenants and their tokens as administered (AEP-0003 §8.1 scoped tokens). A token's secret
 * is never held: only its digest, by the store, and never in these records.
 */
import type { Scope } from '../../auth/scopes.ts';
import type { Person } from '../../auth/oidc/person.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

export interface TenantRecord {
  tenant: string;
  createdAtMs: number;
  disabled: boolean;
  /** The control ACL as stored (JSON), when the tenant has one. */
  controlPolicy?: string;
}

export interface TokenGrant {
  tenant: string;
  tokenId: string;
  scopes: readonly Scope[];
  agents?: readonly string[];
  /** Epoch milliseconds after which the token is refused. */
  expiresAtMs?: number;
  label?: string;
  /**
   * The highest capture level (AEP-0001 §8.2) the token reads events at: every read (SSE,
   * WebSocket subscribe, history, export, the sinks it sets) is down-levelled to the lower of
   * the request's ceiling and this. Absent on tokens stored before ceilings existed: `full`.
   */
  maxCapture?: CaptureLevel;
  /**
   * The operator (AEP-0003 §8.3) whose identity cards this token's connections may present:
   * a card of any other operator is refused and the connection closed. Attenuated like agents.
   */
  operator?: string;
  /**
   * The id of the first token of this token's rotation chain (its own id until it is rotated):
   * the name control policy rules match, so a rule keeps applying through rotation. Absent on
   * tokens stored before lineages existed: the token's own id.
   */
  lineage?: string;
  /**
   * The token that issued this one (`{tenant}/{tokenId}`), when a token did; revoking it
   * revokes this one too. Absent for tokens issued with AWS credentials (the CLI's direct mode).
   */
  issuedBy?: TokenRef;
  /** The person a team sign-in issued this credential to (OpenID Connect), recorded beside what it does. */
  person?: Person;
}

/** A token named across tenants (the operator issues into other tenants). */
export interface TokenRef {
  tenant: string;
  tokenId: string;
}

export interface TokenRecord extends TokenGrant {
  createdAtMs: number;
  revokedAtMs?: number;
}
