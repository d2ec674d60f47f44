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
import { bearerToken } from '../auth/bearer.ts';
import type { BearerSources } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import { hashTokenSecret, isWellFormedTokenSecret } from '../auth/token-secret.ts';
import type { TokensPort } from './ports/index.ts';
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

/** The principal a request's credentials name, or undefined when they name none (no token, malformed, unknown, revoked, expired, tenant disabled). */
export async function authenticate(authority: TokenAuthority, sources: BearerSources): Promise<Authentication | undefined> {
  const token = bearerToken(sources);
  if (token === undefined || !isWellFormedTokenSecret(token)) return undefined;
  const tokenDigest = hashTokenSecret(token);
  if (authority.refusedTokens.has(tokenDigest)) return undefined;
  const found = await authority.tokens.lookUp(tokenDigest);
  if ('principal' in found) return { principal: found.principal, tokenDigest };
  // A disabled tenant may be enabled again; every other refusal is final.
  if (found.refused !== 'disabled') authority.refusedTokens.remember(tokenDigest);
  return undefined;
}
