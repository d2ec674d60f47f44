/** Rebuilds the principal from the authorizer context API Gateway attaches to every route. */
import type { Principal } from '../auth/principal.ts';
import { isScope } from '../auth/scopes.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import type { RelayAuthorizerContext } from './websocket-event.ts';

export function principalFromAuthorizer(context: RelayAuthorizerContext | undefined): Principal | undefined {
  if (context === undefined || !isTenantId(context.tenant) || typeof context.tokenId !== 'string') return undefined;
  let agents: string[] | undefined;
  if (typeof context.agents === 'string') {
    try {
      const parsed: unknown = JSON.parse(context.agents);
      if (Array.isArray(parsed)) agents = parsed.filter((agent): agent is string => typeof agent === 'string');
    } catch {
      return undefined;
    }
  }
  const expiresAtMs = context.expiresAt === undefined ? undefined : Number(context.expiresAt);
  if (expiresAtMs !== undefined && !Number.isSafeInteger(expiresAtMs)) return undefined;
  return {
    tenant: context.tenant,
    tokenId: context.tokenId,
    scopes: (context.scopes ?? '').split(',').filter(isScope),
    ...(agents === undefined ? {} : { agents }),
    ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
  };
}
