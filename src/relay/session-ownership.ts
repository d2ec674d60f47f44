/**
 * A session belongs to the agent whose sequenced events it holds (AEP-0001 §5.2: one owning
 * emitter per session, the party assigning its `(epoch, seq)` positions). The first
 * sequenced event of a session settles its owner; afterwards, a token bound to agents may
 * put sequenced events into the session (and so claim it for commands, AEP-0004 §4.5) only as
 * the owner. Foreign-emitter events (commands, `attention.routed`: seq-less by definition)
 * are not ownership events and pass.
 *
 * Unbound tokens are tenant-wide by grant (they may emit as any agent), so they are not
 * refused; their sequenced events still settle the owner of a new session, so a bound token
 * cannot take over a session an unbound emitter started.
 *
 * Cost: one conditional write per session per process; the owner is remembered afterwards
 * (ownership never changes while the session is retained), so the hot path reads nothing.
 */
import type { Principal } from '../auth/principal.ts';
import type { AepEvent } from '../protocol/event.ts';
import { isAgentScopedType, isForeignEmitterType } from '../protocol/type-grammar.ts';
import type { SessionOwnersPort } from './ports/session-owners.ts';

/** Owners this process has settled, by tenant and session. Bounded; forgetting only costs a write. */
export class KnownOwners {
  private readonly owners = new Map<string, string>();

  constructor(private readonly limit = 50_000) {}

  get(tenant: string, session: string): string | undefined {
    return this.owners.get(`${tenant}\u0000${session}`);
  }

  remember(tenant: string, session: string, owner: string): void {
    if (this.owners.size > this.limit) this.owners.clear();
    this.owners.set(`${tenant}\u0000${session}`, owner);
  }
}

/** The session's owning agent (remembered once known), or undefined while it has none. */
export async function sessionOwnerOf(deps: OwnershipDeps, tenant: string, session: string): Promise<string | undefined> {
  const known = deps.knownOwners.get(tenant, session);
  if (known !== undefined) return known;
  const owner = await deps.sessionOwners.ownerOf(tenant, session);
  if (owner !== undefined) deps.knownOwners.remember(tenant, session, owner);
  return owner;
}

/** Whether this event is the session owner's own: session-scoped and sequenced, not a foreign-emitter type. */
export function isOwnershipEvent(event: AepEvent): event is AepEvent & { session: string } {
  return event.session !== undefined && event.seq !== undefined && !isAgentScopedType(event.type) && !isForeignEmitterType(event.type);
}

export interface OwnershipDeps {
  sessionOwners: SessionOwnersPort;
  knownOwners: KnownOwners;
}

/**
 * Settles the owner of the event's session and says why the principal may not put this event
 * into it, or undefined when it may (always, for events that are not ownership events).
 */
export async function ownershipRefusal(deps: OwnershipDeps, principal: Principal, event: AepEvent): Promise<string | undefined> {
  if (!isOwnershipEvent(event)) return undefined;
  const { tenant } = principal;
  let owner = deps.knownOwners.get(tenant, event.session);
  if (owner === undefined) {
    owner = await deps.sessionOwners.settleOwner(tenant, event.session, event.agent);
    deps.knownOwners.remember(tenant, event.session, owner);
  }
  if (owner === event.agent || principal.agents === undefined) return undefined;
  return `session ${JSON.stringify(event.session)} belongs to another agent: a token bound to agents may put sequenced events only into its own agents' sessions (AEP-0001 §5.2)`;
}
