/**
 * The `roster` frame (AEP-0003 §4.1): a snapshot of the live (connection, session) claims of
 * this tenant, one entry per claim, declarations verbatim. Watch-class: refused in-band on
 * emitter-role connections, under the same authentication posture as `subscribe`. A large
 * snapshot is split into frames under the WebSocket frame limit (`roster-frames.ts`).
 */
import { hasScope } from '../../auth/principal.ts';
import type { RosterEntry } from '../../protocol/frames.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { verifiedMember } from '../domain/verified-standing.ts';
import { rosterFrames } from './roster-frames.ts';
import { answer } from './socket-context.ts';
import { refuse } from './socket-refusals.ts';
import { forbidden, limitExceeded } from '../../errors/relay-error.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleRoster(context: SocketContext, connection: ConnectionRecord, id: string): Promise<void> {
  if (connection.hello?.role === 'emitter' || !hasScope(context.principal, 'consume')) {
    await refuse(context, forbidden('roster is answered on consumer and both connections with the consume scope'), { id });
    return;
  }
  const { tenant } = context.principal;
  const claims = await context.runtime.claims.allClaims(tenant);
  const holding = await Promise.all(claims.map((claim) => context.runtime.identity.standings.holds(tenant, claim.declarations.verified)));
  const entries = claims.map((claim, index): RosterEntry => {
    const { agent, instance, control, emits, verified } = claim.declarations;
    return {
      session: claim.session,
      ...(agent === undefined ? {} : { agent }),
      ...(instance === undefined ? {} : { instance }),
      ...(control === undefined ? {} : { control }),
      ...(emits === undefined ? {} : { emits }),
      // Only while the card holds: past its valid_until, or once its operator or key is no
      // longer trusted, the claim is listed unverified.
      ...(verified !== undefined && holding[index] === true ? { verified: verifiedMember(verified) } : {}),
    } as RosterEntry;
  });
  for (const frame of rosterFrames(id, entries)) {
    if (!(await answer(context, frame))) {
      // Refused by the gateway (or the connection went away): say so rather than leave the request unanswered.
      await refuse(context, limitExceeded('the roster reply could not be delivered in full'), { id });
      return;
    }
  }
}
