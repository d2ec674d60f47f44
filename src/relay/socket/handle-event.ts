/**
 * Events sent over the socket: admitted exactly like POSTed ones (errors in-band, `cause` =
 * the event id), claims recorded for emitter connections, commands routed (AEP-0004).
 */
import { hasScope } from '../../auth/principal.ts';
import type { AepEvent, JsonObject } from '../../protocol/event.ts';
import { forbidden, invalidEvent, limitExceeded, refusal, unavailable } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import { isCommandType } from '../../protocol/type-grammar.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { admitEventText } from '../ingest/admission.ts';
import { positionTaken } from '../ingest/ingest.ts';
import { checkEventRate } from '../ingest/quota-checks.ts';
import { isOwnershipEvent } from '../control/session-ownership.ts';
import { routeCommand } from './route-command.ts';
import { refuse } from './socket-refusals.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleEvent(context: SocketContext, connection: ConnectionRecord, raw: string, value: JsonObject): Promise<void> {
  const cause = typeof value.id === 'string' && value.id !== '' ? value.id : undefined;
  const { metrics } = context.runtime;
  const { tenant } = context.principal;
  const refuseEvent = (refusal: RelayError) => {
    metrics.count('EventsRefused', tenant, 1, { code: refusal.code });
    return refuse(context, refusal, cause === undefined ? 'connection' : { cause });
  };
  const admission = admitEventText(raw, context.principal, context.runtime.config.limits);
  if (!admission.ok) return void (await refuseEvent(refusal(admission.refusal.code, admission.refusal.detail)));
  const { event } = admission.admitted;
  if (isCommandType(event.type)) {
    await routeCommand(context, connection, admission.admitted);
    return;
  }
  if (!hasScope(context.principal, 'emit')) return void (await refuseEvent(forbidden('this token lacks the emit scope')));
  const helloAgent = connection.hello?.identity.agent;
  if (context.principal.agents !== undefined && isOwnershipEvent(event) && event.agent !== helloAgent) {
    // A bound connection claims sessions only for the agent it said hello as (AEP-0003 §4 rule 3).
    return void (await refuseEvent(forbidden(`this connection said hello as agent ${JSON.stringify(helloAgent)}; its sequenced events carry that agent`)));
  }
  const rateRefusal = await checkEventRate(context.runtime, context.principal.tenant, 1);
  if (rateRefusal !== undefined) return void (await refuseEvent(limitExceeded(rateRefusal)));
  try {
    // An emitter connection's sequenced event names its connection: fan-out records the claim (`fanout/session-claims.ts`).
    const annotations = ownsSession(connection, event) ? { via: context.connectionId } : {};
    if ((await context.runtime.eventLog.append(tenant, admission.admitted, undefined, annotations)) === 'conflict') {
      await refuseEvent(invalidEvent(positionTaken(admission.admitted)));
    } else {
      metrics.count('EventsAdmitted', tenant);
    }
  } catch (error) {
    context.logger.error('append failed', { error, connectionId: context.connectionId });
    await refuseEvent(unavailable('the event store is unavailable; resend the event with the same id', error));
  }
}

/** A session-scoped, sequenced event from an emitter connection claims its session (AEP-0004 §4.5). */
function ownsSession(connection: ConnectionRecord, event: AepEvent): event is AepEvent & { session: string } {
  const role = connection.hello?.role;
  return (role === 'emitter' || role === 'both') && isOwnershipEvent(event);
}
