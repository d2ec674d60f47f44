/**
 * Events sent over the socket: admitted exactly like POSTed ones (errors in-band, `cause` =
 * the event id), claims recorded for emitter connections, commands routed (AEP-0004).
 */
import { hasScope } from '../../auth/principal.ts';
import type { AepEvent, JsonObject } from '../../protocol/event.ts';
import { errorFrame } from '../../protocol/frames.ts';
import { isAgentScopedType, isCommandType, isForeignEmitterType } from '../../protocol/type-grammar.ts';
import type { ClaimDeclarations, ConnectionRecord } from '../../store/connection-store.ts';
import { admitEventText } from '../admission.ts';
import { routeCommand } from './route-command.ts';
import { send } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

/** Claims this process has already recorded, so repeated events skip the conditional write. */
const knownClaims = new Set<string>();

export async function handleEvent(context: SocketContext, connection: ConnectionRecord, raw: string, value: JsonObject): Promise<void> {
  const cause = typeof value.id === 'string' && value.id !== '' ? value.id : undefined;
  const refuse = (code: string, detail: string) => send(context, errorFrame({ code, ...(cause === undefined ? {} : { cause }), detail }));
  const admission = admitEventText(raw, context.principal, context.runtime.config.limits);
  if (!admission.ok) return void (await refuse(admission.refusal.code, admission.refusal.detail));
  const { event } = admission.admitted;
  if (isCommandType(event.type)) {
    await routeCommand(context, admission.admitted);
    return;
  }
  if (!hasScope(context.principal, 'emit')) return void (await refuse('unauthorized', 'this token lacks the emit scope'));
  const { eventsPerSecond } = await context.runtime.quotas.quotasOf(context.principal.tenant);
  if (eventsPerSecond !== undefined && !(await context.runtime.quotas.admitEvents(context.principal.tenant, 1, eventsPerSecond))) {
    return void (await refuse('limit-exceeded', `the tenant's quota is ${eventsPerSecond} events per second; resend the event later`));
  }
  try {
    // Inside the try: a claim that cannot be written refuses the event like a failed append (never a silent drop).
    if (ownsSession(connection, event)) await recordClaim(context, connection, event.session as string);
    await context.runtime.eventLog.append(context.principal.tenant, admission.admitted);
  } catch (error) {
    context.logger.error('append failed', { error, connectionId: context.connectionId });
    await refuse('unavailable', 'the event store is unavailable; resend the event with the same id');
  }
}

/** A session-scoped, sequenced event from an emitter connection claims its session (AEP-0004 §4.5). */
function ownsSession(connection: ConnectionRecord, event: AepEvent): boolean {
  const role = connection.hello?.role;
  return (role === 'emitter' || role === 'both') && event.session !== undefined && !isAgentScopedType(event.type) && !isForeignEmitterType(event.type);
}

async function recordClaim(context: SocketContext, connection: ConnectionRecord, session: string): Promise<void> {
  const cacheKey = `${context.principal.tenant}\u0000${context.connectionId}\u0000${session}`;
  if (knownClaims.has(cacheKey)) return;
  await context.runtime.connections.claim(context.principal.tenant, context.connectionId, session, declarationsOf(connection));
  if (knownClaims.size > 50_000) knownClaims.clear();
  knownClaims.add(cacheKey);
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
  };
}
