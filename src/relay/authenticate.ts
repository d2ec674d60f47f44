/**
 * The relay's one authentication path, for every binding: find the bearer token of a
 * request (`bearer.ts`), hash it, and resolve the digest to a principal. The token itself is
 * never returned, stored or logged; the digest is, so a long-lived stream can re-check it.
 */
import { bearerToken } from '../auth/bearer.ts';
import type { BearerSources } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import { hashTokenSecret } from '../auth/token-secret.ts';

/** What authentication needs of the token store: resolving a token digest to its principal. */
export interface TokenResolver {
  resolve(tokenDigest: string): Promise<Principal | undefined>;
}

export interface Authentication {
  principal: Principal;
  /** SHA-256 digest of the bearer token, never the token. */
  tokenDigest: string;
}

/** The principal a request's credentials name, or undefined when they name none (no token, unknown, revoked, expired). */
export async function authenticate(tokens: TokenResolver, sources: BearerSources): Promise<Authentication | undefined> {
  const token = bearerToken(sources);
  if (token === undefined) return undefined;
  const tokenDigest = hashTokenSecret(token);
  const principal = await tokens.resolve(tokenDigest);
  return principal === undefined ? undefined : { principal, tokenDigest };
}
