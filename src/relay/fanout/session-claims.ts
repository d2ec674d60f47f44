/**
 * Session claims (AEP-0004 §4.5), recorded by fan-out from the events themselves: an emitter
 * connection's sequenced event carries the connection it came on (`via`), and the first one of
 * each connection and session that fan-out meets records the claim, before any of the session's
 * events is delivered. So a consumer that saw an event can always route a command to its
 * emitter, and a pipelined burst of first events costs one claim, not one per frame: on AWS each
 * concurrent frame may run in an instance of its own, where no memory of the first claim helps.
 */
import type { ClaimDeclarations } from '../domain/claim.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { KnownClaims } from '../control/known-claims.ts';

export async function claimSessions(runtime: Pick<RelayPorts, 'connections' | 'claims'> & { knownClaims: KnownClaims }, deliverables: readonly Deliverable[]): Promise<void> {
  const pairs = new Map<string, { tenant: string; connectionId: string; session: string }>();
  for (const { tenant, via, event } of deliverables) {
    if (via === undefined || event.session === undefined) continue;
    pairs.set(`${tenant}\u0000${via}\u0000${event.session}`, { tenant, connectionId: via, session: event.session });
  }
  await Promise.all(
    [...pairs.values()].map(({ tenant, connectionId, session }) =>
      runtime.knownClaims.once(tenant, connectionId, session, async () => {
        const connection = await runtime.connections.getConnection(tenant, connectionId);
        // Gone already: there is no live claimant to record.
        if (connection?.hello === undefined) return;
        await runtime.claims.claim(tenant, connectionId, session, declarationsOf(connection));
      }),
    ),
  );
}

/** The claim's declarations, taken verbatim from the claiming connection's hello (AEP-0003 §4.1 rule 4). */
function declarationsOf(connection: ConnectionRecord): ClaimDeclarations {
  const identity = connection.hello?.identity ?? {};
  const capabilities = connection.hello?.capabilities ?? {};
  const control = capabilities.control;
  return {
    ...(typeof identity.agent === 'string' ? { agent: identity.agent } : {}),
    ...(typeof identity.instance === 'string' ? { instance: identity.instance } : {}),
    ...(typeof control === 'object' && control !== null && !Array.isArray(control) ? { control } : {}),
    ...(capabilities.emits !== undefined ? { emits: capabilities.emits } : {}),
    // The relay's own finding about the claimant (its card), kept beside the declarations.
    ...(connection.hello?.verified === undefined ? {} : { verified: connection.hello.verified }),
  };
}
