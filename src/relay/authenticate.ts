/**
 * Resolves a request's bearer token to a principal through the tenant store. The token is
 * hashed before the lookup and is never returned, stored or logged.
 */
import { bearerToken } from '../auth/bearer.ts';
import type { BearerSources } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import { hashTokenSecret } from '../auth/token-secret.ts';
import type { TenantStore } from '../store/tenant-store.ts';

export async function authenticate(tenants: TenantStore, sources: BearerSources): Promise<Principal | undefined> {
  const token = bearerToken(sources);
  if (token === undefined) return undefined;
  return tenants.resolve(hashTokenSecret(token));
}
