/** Scoped tokens (AEP-0003 §8.1), held by the SHA-256 digest of their secret, never the secret. */
import type { Principal } from '../../auth/principal.ts';
import type { TokenGrant, TokenRecord, TokenRef } from '../domain/tenant.ts';

/** Why a digest names no principal: `disabled` may change (the tenant enabled again); the others are final. */
export type TokenRefusal = 'unknown' | 'revoked' | 'expired' | 'disabled';

/** A digest's principal, or why it has none (a disabled tenant's token: which tenant, so its holder can be told). */
export type TokenLookup = { principal: Principal } | { refused: Exclude<TokenRefusal, 'disabled'> } | { refused: 'disabled'; tenant: string };

export interface TokensPort {
  /** The principal a token digest stands for, or why it stands for none. */
  lookUp(secretDigest: string): Promise<TokenLookup>;
  /** The principal a token digest stands for, or undefined when the token is unknown, revoked, expired, or its tenant is disabled. */
  resolve(secretDigest: string): Promise<Principal | undefined>;
  /** One token of a tenant; undefined when the tenant has no such token. */
  getToken(tenant: string, tokenId: string): Promise<TokenRecord | undefined>;
  /** Stores a new token under its digest. The caller mints the secret and shows it once. */
  putToken(grant: TokenGrant, secretDigest: string): Promise<void>;
  listTokens(tenant: string): Promise<TokenRecord[]>;
  /** Whether the token is still good: not revoked, not expired, and its tenant enabled. */
  isActive(tenant: string, tokenId: string): Promise<boolean>;
  /** Marks a token revoked; false when the tenant has no such token. */
  revokeToken(tenant: string, tokenId: string): Promise<boolean>;
  /** The tokens `issuer` issued (and those handed to it by rotation), for cascading revocation. */
  issuedBy(issuer: TokenRef): Promise<TokenRef[]>;
  /** Records that `issuer` stands for `issued` too (rotation hands the old token's issues on). */
  linkIssued(issuer: TokenRef, issued: TokenRef): Promise<void>;
}
