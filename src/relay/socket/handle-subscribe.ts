/**
 * `subscribe` / `unsubscribe` on the WebSocket binding (AEP-0003 §6.5).
 *
 * The subscription is recorded (state `replaying`) before its replay is read, so an event
 * written in between is never missed (DESIGN hazard 3). While it replays, fan-out parks
 * matching live events on the subscription instead of posting them; after the replay this
 * handler delivers what was parked and flips the subscription to `live` with a conditional
 * write that fails if more was parked meanwhile (then it delivers those and tries again).
 * Live events therefore follow replayed ones in order, and none falls in the gap.
 */
import { hasScope } from '../../auth/principal.ts';
import { sessionEqualityOf } from '../../protocol/attr-match.ts';
import type { SubscribeRequest } from '../../protocol/frames.ts';
import { errorFrame, parseSubscribe, replayExhausted, subscribed, unsubscribed } from '../../protocol/frames.ts';
import { deliveryText, parseStored } from '../delivery-text.ts';
import { replaySteps } from '../replay-plan.ts';
import type { ConnectionRecord } from '../../store/connection-store.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { AepEvent } from '../../protocol/event.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
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
  const pinnedSessions = sessionEqualityOf(parsed.filter);
  const recorded = await connections.addSubscription(
    context.principal.tenant,
    context.connectionId,
    {
      subscriptionId: parsed.id,
      filter: JSON.stringify(parsed.filter),
      ...(parsed.capture === undefined ? {} : { ceiling: parsed.capture }),
      ...(pinnedSessions === undefined ? {} : { sessions: pinnedSessions }),
    },
    config.limits.maxSubscriptionsPerConnection,
  );
  if (!recorded) {
    await refuse('limit-exceeded', `a connection may hold at most ${config.limits.maxSubscriptionsPerConnection} subscriptions (AEP_MAX_SUBSCRIPTIONS)`);
    return;
  }
  if (!(await send(context, subscribed(parsed.id)))) return;
  // Per session, the newest position the consumer has (asked to resume after, or was replayed).
  const highWater = new Map<string, Position>();
  if (Array.isArray(parsed.from)) for (const position of parsed.from) raiseHighWater(highWater, position);
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
      if (step.kind === 'event' && step.position !== undefined) raiseHighWater(highWater, step.position);
    }
  }
  await goLive(context, parsed.id, parsed.capture, highWater);
}

function raiseHighWater(highWater: Map<string, Position>, position: Position): void {
  const current = highWater.get(position.session);
  if (current === undefined || comparePositions(position, current) > 0) highWater.set(position.session, position);
}

/**
 * Delivers what fan-out parked during the replay, then flips every index entry to live.
 * Parked events at or below the session's high-water position were already replayed, or
 * precede the requested resume point, so they are skipped rather than sent twice.
 */
async function goLive(context: SocketContext, subscriptionId: string, ceiling: CaptureLevel | undefined, highWater: ReadonlyMap<string, Position>): Promise<void> {
  const { connections } = context.runtime;
  const entries = await connections.subscriptionEntries(context.principal.tenant, context.connectionId, subscriptionId);
  for (const entry of entries) {
    let delivered = 0;
    let current = entry;
    for (;;) {
      for (const raw of current.pending.slice(delivered)) {
        delivered += 1;
        const event = parseStored(raw);
        if (event === undefined || isCovered(event, highWater)) continue;
        if (!(await send(context, deliveryText(raw, event, ceiling)))) return;
      }
      if (await connections.goLive(current, delivered)) break;
      const [reread] = (await connections.subscriptionEntries(context.principal.tenant, context.connectionId, subscriptionId)).filter(
        (candidate) => candidate.indexKey.pk === entry.indexKey.pk,
      );
      if (reread === undefined) return;
      current = reread;
    }
  }
}

function isCovered(event: AepEvent, highWater: ReadonlyMap<string, Position>): boolean {
  const position = positionOf(event);
  if (position === undefined) return false;
  const covered = highWater.get(position.session);
  return covered !== undefined && comparePositions(position, covered) <= 0;
}

export async function handleUnsubscribe(context: SocketContext, subscriptionId: string): Promise<void> {
  await context.runtime.connections.removeSubscription(context.principal.tenant, context.connectionId, subscriptionId);
  await send(context, unsubscribed(subscriptionId));
}
