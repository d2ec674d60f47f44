/**
 * The relay's one authentication path, for every binding: find the bearer token of a
 * request (`bearer.ts`), check its shape, hash it, and resolve the digest to a principal. The
 * token itself is never returned, stored or logged; the digest is, so a long-lived stream can
 * re-check it.
 *
 * What a bad token costs: none, or a malformed one, no DynamoDB read at all (refused on its
 * shape); a well-formed one that names no usable token one read, then none for
 * `REFUSED_TOKEN_TTL_MS` on this instance (`refused-tokens.ts`).
 */
import { bearerToken } from '../../auth/bearer.ts';
import type { BearerSources } from '../../auth/bearer.ts';
import type { Principal } from '../../auth/principal.ts';
import { hashTokenSecret, isWellFormedTokenSecret } from '../../auth/token-secret.ts';
import { unauthenticated } from '../../errors/relay-error.ts';
import type { TokensPort } from '../ports/index.ts';
import type { RefusedTokens } from './refused-tokens.ts';

/** What authentication needs: the token lookup, and this process's memory of refused digests. */
export interface TokenAuthority {
  tokens: Pick<TokensPort, 'lookUp'>;
  refusedTokens: RefusedTokens;
}

export interface Authentication {
  principal: Principal;
  /** SHA-256 digest of the bearer token, never the token. */
  tokenDigest: string;
}

/**
 * Credentials of a real, unrevoked token whose tenant is disabled. Its holder is a member of
 * the tenant and is told why it is refused (the same 401 otherwise): a disabled tenant's own
 * admin reads "tenant disabled", not "a valid bearer token is required".
 */
export interface DisabledTenantCredentials {
  disabledTenant: string;
}

/**
 * The principal a request's credentials name, a disabled tenant's credentials, or undefined when
 * they name none (no token, malformed, unknown, revoked, expired).
 */
export async function authenticate(authority: TokenAuthority, sources: BearerSources): Promise<Authentication | DisabledTenantCredentials | undefined> {
  const token = bearerToken(sources);
  if (token === undefined || !isWellFormedTokenSecret(token)) return undefined;
  const tokenDigest = hashTokenSecret(token);
  if (authority.refusedTokens.has(tokenDigest)) return undefined;
  const found = await authority.tokens.lookUp(tokenDigest);
  if ('principal' in found) return { principal: found.principal, tokenDigest };
  // A disabled tenant may be enabled again; every other refusal is final.
  if (found.refused === 'disabled') return { disabledTenant: found.tenant };
  authority.refusedTokens.remember(tokenDigest);
  return undefined;
}

/** The authentication, or the 401 every binding answers without one (AEP-0003 §8.1), saying so when the tenant is disabled. */
export function requireAuthentication(found: Authentication | DisabledTenantCredentials | undefined): Authentication {
  if (found === undefined) throw unauthenticated();
  if ('disabledTenant' in found) throw unauthenticated(`tenant ${found.disabledTenant} is disabled: its tokens are refused until the operator enables it again`);
  return found;
}
