/**
 * Attenuation: a token issues (or rotates) only tokens no stronger than itself. The grant's
 * scopes must be among the issuer's; an issuer bound to agents gives only tokens bound to a
 * subset of them; an issuer that expires gives only tokens that expire no later.
 *
 * On issue, a member the request leaves open inherits the issuer's limit (a bound issuer's
 * request without `agents` is bound to the issuer's agents; one without an expiry expires with
 * the issuer). On rotation nothing is inherited: the rotated grant is kept as it is, so one
 * wider than the caller's is refused. A member asking for more is refused with 403.
 */
import type { Principal } from '../auth/principal.ts';
import { forbidden } from '../errors/relay-error.ts';
import type { TokenGrant } from '../relay/domain/tenant.ts';

export type Grant = Omit<TokenGrant, 'tokenId'>;

/** The grant as `issuer` may give it; throws 403 `unauthorized` when it is wider than the issuer. */
export function attenuate(issuer: Principal, grant: Grant, mode: 'issue' | 'rotate'): Grant {
  const inherit = mode === 'issue';
  const extraScopes = grant.scopes.filter((scope) => !issuer.scopes.includes(scope));
  if (extraScopes.length > 0) throw forbidden(`this token lacks the ${extraScopes.join(', ')} scope; a token gives only scopes it holds`);
  const attenuated: Grant = { ...grant };
  if (issuer.agents !== undefined) {
    if (grant.agents === undefined) {
      if (!inherit) throw forbidden(`this token is bound to ${JSON.stringify(issuer.agents)}; it may not give an unbound token`);
      attenuated.agents = [...issuer.agents];
    } else {
      const foreign = grant.agents.filter((agent) => !issuer.agents?.includes(agent));
      if (foreign.length > 0) throw forbidden(`this token is bound to ${JSON.stringify(issuer.agents)}; it may not give a token for ${JSON.stringify(foreign)}`);
    }
  }
  if (issuer.expiresAtMs !== undefined) {
    if (grant.expiresAtMs === undefined) {
      if (!inherit) throw forbidden('this token expires; it may not give a token that never does');
      attenuated.expiresAtMs = issuer.expiresAtMs;
    } else if (grant.expiresAtMs > issuer.expiresAtMs) {
      throw forbidden(`this token expires at ${new Date(issuer.expiresAtMs).toISOString()}; it may not give a token that outlives it`);
    }
  }
  return attenuated;
}
