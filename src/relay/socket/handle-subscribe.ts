/**
 * `subscribe` / `unsubscribe` on the WebSocket binding (AEP-0003 §6.5).
 *
 * The subscription is recorded (state `replaying`) before its replay is read, so an event
 * written in between is never missed; `subscription-handoff.ts` then moves it to live.
 */
import { hasScope } from '../../auth/principal.ts';
import { sessionEqualityOf } from '../../protocol/attr-match.ts';
import type { SubscribeRequest } from '../../protocol/frames.ts';
import { errorFrame, parseSubscribe, replayExhausted, subscribed, unsubscribed } from '../../protocol/frames.ts';
import { replaySteps } from '../replay-plan.ts';
import { identifierTooLong } from '../admission.ts';
import type { ConnectionRecord } from '../../store/connection-store.ts';
import { handOffToLive, HighWater } from '../subscription-handoff.ts';
import { send } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleSubscribe(context: SocketContext, connection: ConnectionRecord, request: SubscribeRequest): Promise<void> {
  const { config, connections, eventLog } = context.runtime;
  const refuse = (code: 'unauthorized' | 'limit-exceeded', detail: string) => send(context, errorFrame({ code, id: request.id, detail }));
  if (connection.hello?.role === 'emitter') return void (await refuse('unauthorized', 'subscriptions are for consumer and both roles'));
  if (!hasScope(context.principal, 'consume')) return void (await refuse('unauthorized', 'this token lacks the consume scope'));
  const parsed = parseSubscribe(request, { maxPositions: config.limits.maxFromPositions, replayAll: true });
  if (!parsed.ok) {
    await send(context, parsed.error);
    return;
  }
  const tooLong = identifierTooLong({ id: parsed.id, session: [...(sessionEqualityOf(parsed.filter) ?? []), ...(Array.isArray(parsed.from) ? parsed.from.map((position) => position.session) : [])] });
  if (tooLong !== undefined) return void (await refuse('limit-exceeded', tooLong));
  const pinnedSessions = sessionEqualityOf(parsed.filter);
  const maxSubscriptions = (await context.runtime.quotas.quotasOf(context.principal.tenant)).maxSubscriptionsPerConnection ?? config.limits.maxSubscriptionsPerConnection;
  const recorded = await connections.addSubscription(
    context.principal.tenant,
    context.connectionId,
    {
      subscriptionId: parsed.id,
      filter: JSON.stringify(parsed.filter),
      ...(parsed.capture === undefined ? {} : { ceiling: parsed.capture }),
      ...(pinnedSessions === undefined ? {} : { sessions: pinnedSessions }),
    },
    maxSubscriptions,
  );
  if (!recorded) {
    await refuse('limit-exceeded', `a connection may hold at most ${maxSubscriptions} subscriptions (maxSubscriptionsPerConnection)`);
    return;
  }
  if (!(await send(context, subscribed(parsed.id)))) return;
  const highWater = new HighWater();
  if (Array.isArray(parsed.from)) for (const position of parsed.from) highWater.raise(position);
  if (parsed.from !== undefined) {
    const steps = replaySteps(eventLog, {
      tenant: context.principal.tenant,
      from: parsed.from,
      matches: parsed.matches,
      ...(parsed.capture === undefined ? {} : { ceiling: parsed.capture }),
    });
    for await (const step of steps) {
      const frame = step.kind === 'exhausted' ? JSON.stringify(replayExhausted(parsed.id, step.session, step.earliest)) : step.text;
      if (!(await send(context, frame))) return;
      if (step.kind === 'event' && step.position !== undefined) highWater.raise(step.position);
    }
  }
  await handOffToLive(connections, {
    tenant: context.principal.tenant,
    connectionId: context.connectionId,
    subscriptionId: parsed.id,
    ceiling: parsed.capture,
    highWater,
    deliver: (text) => send(context, text),
  });
}

export async function handleUnsubscribe(context: SocketContext, subscriptionId: string): Promise<void> {
  await context.runtime.connections.removeSubscription(context.principal.tenant, context.connectionId, subscriptionId);
  await send(context, unsubscribed(subscriptionId));
}
