/**
 * The `roster` frame (AEP-0003 §4.1): a snapshot of the live (connection, session) claims of
 * this tenant, one entry per claim, declarations verbatim. Watch-class: refused in-band on
 * emitter-role connections, under the same authentication posture as `subscribe`.
 */
import { hasScope } from '../../auth/principal.ts';
import { errorFrame, rosterReply } from '../../protocol/frames.ts';
import type { RosterEntry } from '../../protocol/frames.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { send } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleRoster(context: SocketContext, connection: ConnectionRecord, id: string): Promise<void> {
  if (connection.hello?.role === 'emitter' || !hasScope(context.principal, 'consume')) {
    await send(context, errorFrame({ code: 'unauthorized', id, detail: 'roster is answered on consumer and both connections with the consume scope' }));
    return;
  }
  const claims = await context.runtime.claims.allClaims(context.principal.tenant);
  const entries = claims.map((claim): RosterEntry => {
    const { agent, instance, control, emits } = claim.declarations;
    return {
      session: claim.session,
      ...(agent === undefined ? {} : { agent }),
      ...(instance === undefined ? {} : { instance }),
      ...(control === undefined ? {} : { control }),
      ...(emits === undefined ? {} : { emits }),
    } as RosterEntry;
  });
  await send(context, rosterReply(id, entries));
}
