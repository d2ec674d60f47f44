/**
 * Command routing (AEP-0004 §4): to at most one live claimant of the addressed session, or a
 * refusal to the sender as a connection-scoped `error` frame with `cause` = the command id.
 * Refusals never enter any session's history (§8); a routed command is delivered byte-
 * identically (§4.4) and then stored seq-less in the session's history, anchored where it
 * arrived so it sorts before the acknowledgement it elicits, with `senderVerified` beside it
 * when the sender's identity card held (AEP-0003 §8.3). A retransmitted command (same
 * `source`, `id`) is delivered again every time and stored once (§2.3, AEP-0003 §5). Verified
 * standing is judged at every use (`identity/standing-check.ts`): it ends when its operator or
 * key is no longer trusted.
 */
import { hasScope, policyIdentityOf } from '../../auth/principal.ts';
import type { AdmittedEvent } from '../domain/stored-event.ts';
import { evaluateControlPolicy, policyNamesAgents, sessionRequiresVerified } from '../domain/control-policy.ts';
import { controlPolicyOf } from '../control/tenant-control-policy.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { sessionOwnerOf } from '../control/session-ownership.ts';
import { refuse } from './socket-refusals.ts';
import { commandRefused, forbidden, unavailable } from '../../errors/relay-error.ts';
import type { SocketContext } from './socket-context.ts';

export async function routeCommand(context: SocketContext, connection: ConnectionRecord, command: AdmittedEvent): Promise<void> {
  const { connections, claims, eventLog, poster } = context.runtime;
  const { tenant } = context.principal;
  const { standings } = context.runtime.identity;
  const { event } = command;
  const session = event.session as string;
  const refuseCommand = (code: 'unauthorized' | 'no-route' | 'ambiguous' | 'unsupported' | 'unavailable', detail: string) => {
    context.runtime.metrics.count('CommandsRefused', tenant, 1, { code });
    return refuse(context, code === 'unauthorized' ? forbidden(detail) : code === 'unavailable' ? unavailable(detail) : commandRefused(code, detail), { cause: event.id });
  };

  if (!hasScope(context.principal, 'control')) return void (await refuseCommand('unauthorized', 'this token lacks the control scope (AEP-0004 §4.1)'));
  // The policy is decided before any claim is read: a sender it denies gets `unauthorized`
  // for every session alike, claimed or not, so it cannot map the live sessions.
  const policy = await controlPolicyOf(context.runtime.controlPolicies, tenant);
  // The agent the name belongs to (its first sequenced event's, `session-ownership.ts`).
  const owner = await sessionOwnerOf(context.runtime, tenant, session);
  const targetAgent = policyNamesAgents(policy) ? owner : undefined;
  // Rules name a token by its lineage (the id it was first issued with), which rotation
  // copies to the replacement: so a rule holds through rotation by structure, with no rewrite
  // of stored policies that a concurrent policy edit could undo.
  const verdict = evaluateControlPolicy(policy, { tokenId: policyIdentityOf(context.principal), type: event.type, session, ...(targetAgent === undefined ? {} : { targetAgent }) });
  if (verdict === 'deny') return void (await refuseCommand('unauthorized', "the tenant's control policy denies this command"));
  // Also decided before any claim is read: whether the sender's own card holds (AEP-0003 §8.3).
  if (sessionRequiresVerified(policy.verifiedSenders, session) && !(await standings.holds(tenant, connection.hello?.verified))) {
    return void (await refuseCommand('unauthorized', "the tenant's control policy takes commands for this session from verified senders only (a hello with a valid identity card)"));
  }
  const claimed = await claims.claimsOf(tenant, session);
  // Under a verified-claimants rule an unverified claim is not a claimant at all: it neither
  // receives the command nor makes the session ambiguous beside a verified one
  // (docs/security-and-isolation.md "Identity cards": how this relates to AEP-0004 §4.5 and §8).
  const claimants = sessionRequiresVerified(policy.verifiedClaimants, session) ? await verifiedOnly(claimed, (claim) => standings.holds(tenant, claim.declarations.verified)) : claimed;
  if (claimants.length === 0) return void (await refuseCommand('no-route', `no connected ${claimants === claimed ? '' : 'verified '}emitter claims session ${JSON.stringify(session)}`));
  if (claimants.length > 1) return void (await refuseCommand('ambiguous', `${claimants.length} live connections claim session ${JSON.stringify(session)}; the relay routes to exactly one (AEP-0004 §4.5)`));
  const [target] = claimants as [(typeof claimants)[number]];
  // A sole claimant of another agent is not the session the command is meant for: sessions are
  // emitter-scoped (AEP-0001 §5.2), and a name is routed only to its owner's claimants.
  if (owner !== undefined && target.declarations.agent !== undefined && target.declarations.agent !== owner) {
    return void (await refuseCommand('no-route', `no connected emitter of agent ${JSON.stringify(owner)}, whose session ${JSON.stringify(session)} is, claims it`));
  }
  const accepts = target.declarations.control?.accepts;
  if (!Array.isArray(accepts) || !accepts.includes(event.type)) {
    return void (await refuseCommand('unsupported', `the claimant of ${JSON.stringify(session)} did not declare ${event.type} in control.accepts`));
  }
  const anchor = await eventLog.anchorSeqLess(tenant, session);
  const outcome = await poster.post(target.connectionId, command.raw);
  if (outcome === 'gone') {
    // The claimant vanished without $disconnect: clear its state, and the sender has no route.
    await connections.removeConnection(tenant, target.connectionId);
    return void (await refuseCommand('no-route', `the claimant of ${JSON.stringify(session)} is gone`));
  }
  if (outcome === 'throttled') return void (await refuseCommand('no-route', `the claimant of ${JSON.stringify(session)} is not accepting messages`));
  context.runtime.metrics.count('CommandsRouted', tenant);
  // Whether the sender's card held when it sent: stored beside the text, never in it (history
  // shows it; the text stays byte-identical, AEP-0004 §4.4).
  const standing = connection.hello?.verified;
  const verified = standing !== undefined && (await standings.holds(tenant, standing)) ? { senderVerified: { operator: standing.operator } } : {};
  // Who answered: the signed-in person behind the sending token, also beside the text.
  const person = context.principal.person;
  const annotations = person === undefined ? verified : { ...verified, sentBy: person };
  try {
    await eventLog.append(tenant, command, anchor, annotations);
  } catch (error) {
    context.logger.error('command delivered but not stored', { error, connectionId: context.connectionId });
  }
}

/** The items whose standing holds, in their order. */
async function verifiedOnly<T>(items: readonly T[], holds: (item: T) => Promise<boolean>): Promise<T[]> {
  const verdicts = await Promise.all(items.map(holds));
  return items.filter((_, index) => verdicts[index]);
}
