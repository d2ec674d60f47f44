/**
 * What `GET /token` tells a caller about its own token: the grant it was issued with, never
 * the secret or its digest. A client that acts for a person (the console) reads it to know
 * which agents it may speak as: a token bound to agents has every event and command it sends
 * checked against them (`src/relay/agent-binding.ts`), so the console must name one of them as
 * its commands' sender instead of its own `console`.
 */
import type { Principal } from './principal.ts';
import { SCOPES } from './scopes.ts';
import type { Person } from './oidc/person.ts';

export interface GrantView {
  tenant: string;
  tokenId: string;
  scopes: string[];
  /** Present only for a bound token: the agents its events and commands must carry, sorted (stored as an unordered set). */
  agents?: string[];
  expiresAt?: string;
  /** The token's capture ceiling: what every read it makes is gated at, at most. */
  maxCapture: string;
  /** The signed-in person, for a credential a team sign-in issued. */
  person?: Person;
}

export function grantViewOf(principal: Principal): GrantView {
  return {
    tenant: principal.tenant,
    tokenId: principal.tokenId,
    scopes: SCOPES.filter((scope) => principal.scopes.includes(scope)),
    ...(principal.agents === undefined ? {} : { agents: [...principal.agents].sort() }),
    ...(principal.expiresAtMs === undefined ? {} : { expiresAt: new Date(principal.expiresAtMs).toISOString() }),
    maxCapture: principal.maxCapture ?? 'full',
    ...(principal.person === undefined ? {} : { person: principal.person }),
  };
}
