/**
 * Which agent a session name belongs to in a tenant: the agent of its first sequenced event.
 * Sessions are emitter-scoped (AEP-0001 §5.2): another emitter's events under the same name are
 * that emitter's own session and are stored and delivered as such; the owner matters only to
 * command routing, so that a token bound to other agents never receives the commands meant for
 * the session the owner runs, also while the owner is offline (`route-command.ts`: a sole live
 * claimant of another agent is `no-route`).
 *
 * Cost: one conditional write per session name per process; the owner is remembered afterwards
 * (it never changes while the session is retained), so the hot path reads nothing.
 */
import type { AepEvent } from '../../protocol/event.ts';
import { isAgentScopedType, isForeignEmitterType } from '../../protocol/type-grammar.ts';
import type { SessionOwnersPort } from '../ports/session-owners.ts';

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

/** Records the owner of the event's session name when the event is the first sequenced one of it. */
export async function settleOwner(deps: OwnershipDeps, tenant: string, event: AepEvent): Promise<void> {
  if (!isOwnershipEvent(event) || deps.knownOwners.get(tenant, event.session) !== undefined) return;
  deps.knownOwners.remember(tenant, event.session, await deps.sessionOwners.settleOwner(tenant, event.session, event.agent));
}
