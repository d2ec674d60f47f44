/** Rebuilds the principal from the authorizer context API Gateway attaches to every route. */
import type { Principal } from '../auth/principal.ts';
import { isScope } from '../auth/scopes.ts';
import { isPerson } from '../auth/oidc/person.ts';
import type { Person } from '../auth/oidc/person.ts';
import { isCaptureLevel } from '../protocol/levels.ts';
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
  // An unknown ceiling fails closed: the connection reads nothing above `none`.
  const maxCapture = context.maxCapture === undefined ? undefined : isCaptureLevel(context.maxCapture) ? context.maxCapture : 'none';
  const person = personOf(context.person);
  return {
    tenant: context.tenant,
    tokenId: context.tokenId,
    scopes: (context.scopes ?? '').split(',').filter(isScope),
    ...(agents === undefined ? {} : { agents }),
    ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
    ...(maxCapture === undefined ? {} : { maxCapture }),
    ...(typeof context.lineage === 'string' && context.lineage !== '' ? { lineage: context.lineage } : {}),
    ...(typeof context.operator === 'string' && context.operator !== '' ? { operator: context.operator } : {}),
    ...(person === undefined ? {} : { person }),
  };
}

function personOf(text: string | undefined): Person | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isPerson(parsed) ? { subject: parsed.subject, name: parsed.name, provider: parsed.provider } : undefined;
  } catch {
    return undefined;
  }
}
