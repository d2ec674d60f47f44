/**
 * Attenuation: a token issues (or rotates, or revokes) only tokens no stronger than itself.
 * The grant's scopes must be among the issuer's; an issuer bound to agents gives only tokens
 * bound to a subset of them; an issuer that expires gives only tokens that expire no later;
 * an issuer with a capture ceiling gives only tokens at or below it.
 *
 * On issue, a member the request leaves open inherits the issuer's limit (a bound issuer's
 * request without `agents` is bound to the issuer's agents; one without an expiry expires with
 * the issuer; one without `maxCapture` reads at the issuer's ceiling). On rotation and
 * revocation nothing is inherited: the target's grant is taken as it is, so one wider than the
 * caller's is refused. A member asking for more is refused with 403.
 */
import type { Principal } from '../auth/principal.ts';
import { forbidden } from '../errors/relay-error.ts';
import { captureRank } from '../protocol/levels.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { TokenGrant } from '../relay/domain/tenant.ts';

export type Grant = Omit<TokenGrant, 'tokenId'>;

/** A token's capture ceiling as attenuation compares it: unset is `full` (tokens stored before ceilings existed). */
export const ceilingOf = (token: { maxCapture?: CaptureLevel | undefined }): CaptureLevel => token.maxCapture ?? 'full';

/**
 * The grant as `issuer` may give it; throws 403 `unauthorized` when it is wider than the issuer.
 * `issue` fills what the grant leaves open from the issuer; `cover` (rotation, revocation)
 * only checks that the caller could have issued the grant as it stands.
 */
export function attenuate(issuer: Principal, grant: Grant, mode: 'issue' | 'cover'): Grant {
  const inherit = mode === 'issue';
  const verb = inherit ? 'give' : 'act on';
  const extraScopes = grant.scopes.filter((scope) => !issuer.scopes.includes(scope));
  if (extraScopes.length > 0) throw forbidden(`this token lacks the ${extraScopes.join(', ')} scope; a token may ${verb} only tokens whose scopes it holds`);
  const attenuated: Grant = { ...grant };
  if (issuer.agents !== undefined) {
    if (grant.agents === undefined) {
      if (!inherit) throw forbidden(`this token is bound to ${JSON.stringify(issuer.agents)}; it may not act on an unbound token`);
      attenuated.agents = [...issuer.agents];
    } else {
      const foreign = grant.agents.filter((agent) => !issuer.agents?.includes(agent));
      if (foreign.length > 0) throw forbidden(`this token is bound to ${JSON.stringify(issuer.agents)}; it may not ${verb} a token for ${JSON.stringify(foreign)}`);
    }
  }
  if (issuer.operator !== undefined) {
    if (grant.operator === undefined) {
      if (!inherit) throw forbidden(`this token is bound to operator ${JSON.stringify(issuer.operator)}; it may not act on a token that is not`);
      attenuated.operator = issuer.operator;
    } else if (grant.operator !== issuer.operator) {
      throw forbidden(`this token is bound to operator ${JSON.stringify(issuer.operator)}; it may not ${verb} a token for operator ${JSON.stringify(grant.operator)}`);
    }
  }
  if (issuer.expiresAtMs !== undefined) {
    if (grant.expiresAtMs === undefined) {
      if (!inherit) throw forbidden('this token expires; it may not act on a token that never does');
      attenuated.expiresAtMs = issuer.expiresAtMs;
    } else if (grant.expiresAtMs > issuer.expiresAtMs) {
      throw forbidden(`this token expires at ${new Date(issuer.expiresAtMs).toISOString()}; it may not ${verb} a token that outlives it`);
    }
  }
  const ceiling = ceilingOf(issuer);
  if (grant.maxCapture === undefined) {
    if (inherit) attenuated.maxCapture = ceiling;
    else if (ceiling !== 'full') throw forbidden(`this token reads at most capture ${ceiling}; it may not act on a token that reads at full`);
  } else if (captureRank(grant.maxCapture) > captureRank(ceiling)) {
    throw forbidden(`this token reads at most capture ${ceiling}; it may not ${verb} a token with maxCapture ${grant.maxCapture}`);
  }
  return attenuated;
}

/** Whether a token holds its tenant's whole admin grant: `admin`, bound to no agent, never expiring, reading at `full`. */
export function isTenantWideAdmin(principal: Principal): boolean {
  return principal.scopes.includes('admin') && principal.agents === undefined && principal.operator === undefined && principal.expiresAtMs === undefined && ceilingOf(principal) === 'full';
}

/**
 * Actions over the whole tenant (its control policy, which governs every token's commands;
 * and, for the operator, tenants and quotas) need a tenant-wide admin token: one an attenuated
 * token could not have been issued above. 403 `unauthorized` otherwise.
 */
export function requireTenantWideAdmin(principal: Principal, action: string): void {
  if (isTenantWideAdmin(principal)) return;
  const limits = [
    ...(principal.agents === undefined ? [] : [`bound to ${JSON.stringify(principal.agents)}`]),
    ...(principal.operator === undefined ? [] : [`bound to operator ${JSON.stringify(principal.operator)}`]),
    ...(principal.expiresAtMs === undefined ? [] : ['expiring']),
    ...(ceilingOf(principal) === 'full' ? [] : [`capped at capture ${ceilingOf(principal)}`]),
  ];
  throw forbidden(`${action} needs an admin token bound to no agent, without expiry and reading at full capture; this one is ${limits.join(', ') || 'not an admin token'}`);
}
