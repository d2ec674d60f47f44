/**
 * Tenants and their tokens as administered (AEP-0003 §8.1 scoped tokens). A token's secret
 * is never held: only its digest, by the store, and never in these records.
 */
import type { Scope } from '../../auth/scopes.ts';

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
   * The token that issued this one (`{tenant}/{tokenId}`), when a token did; revoking it
   * revokes this one too. Absent for tokens issued with AWS credentials (the CLI's direct mode).
   */
  issuedBy?: TokenRef;
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
