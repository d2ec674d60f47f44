/**
 * `subscribe` / `unsubscribe` on the WebSocket binding (AEP-0003 §6.5).
 *
 * Recording, replay and the handoff to live are the binding-neutral steps of
 * `open-subscription.ts`; this file checks the request and writes frames.
 */
import { hasScope } from '../../auth/principal.ts';
import { sessionEqualityOf, typeSegmentsOf } from '../../protocol/attr-match.ts';
import type { SubscribeRequest } from '../../protocol/client-message.ts';
import { replayExhausted, subscribed, unsubscribed } from '../../protocol/frames.ts';
import { forbidden, invalidFilter, limitExceeded, refusal } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import { parseSubscribe } from '../../protocol/subscribe-request.ts';
import { identifierTooLong, illFormedIdentifier, tooManyIndexEntries } from '../ingest/admission.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { OUT_OF_TIME, openSubscription, recordSubscription } from '../subscribe/open-subscription.ts';
import type { SubscriptionSpec } from '../subscribe/open-subscription.ts';
import { SUBSCRIPTION_GONE } from '../subscribe/subscription-handoff.ts';
import { subscriptionLimitOf } from '../ingest/quota-checks.ts';
import { readCeilingOf } from '../domain/read-ceiling.ts';
import { answer, closeConnection, send } from './socket-context.ts';
import { refuse } from './socket-refusals.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleSubscribe(context: SocketContext, connection: ConnectionRecord, request: SubscribeRequest): Promise<void> {
  const { config } = context.runtime;
  const refuseSubscribe = (refused: RelayError) => refuse(context, refused, { id: request.id });
  if (connection.hello?.role === 'emitter') return void (await refuseSubscribe(forbidden('subscriptions are for consumer and both roles')));
  if (!hasScope(context.principal, 'consume')) return void (await refuseSubscribe(forbidden('this token lacks the consume scope')));
  const parsed = parseSubscribe(request, { maxPositions: config.limits.maxFromPositions, replayAll: true });
  if (!parsed.ok) return void (await refuseSubscribe(refusal(parsed.error.code, parsed.error.detail)));
  // Each names a key the relay writes (a type pattern's first segment keys its index entry).
  const named = { id: parsed.id, session: [...(sessionEqualityOf(parsed.filter) ?? []), ...(Array.isArray(parsed.from) ? parsed.from.map((position) => position.session) : [])], 'type segment': typeSegmentsOf(parsed.filter) };
  const illFormed = illFormedIdentifier(named);
  if (illFormed !== undefined) return void (await refuseSubscribe(invalidFilter(illFormed)));
  const tooLong = identifierTooLong(named);
  if (tooLong !== undefined) return void (await refuseSubscribe(limitExceeded(tooLong)));
  const tooMany = tooManyIndexEntries({ sessions: sessionEqualityOf(parsed.filter), typeSegments: typeSegmentsOf(parsed.filter) });
  if (tooMany !== undefined) return void (await refuseSubscribe(limitExceeded(tooMany)));
  const { tenant } = context.principal;
  const spec: SubscriptionSpec = { tenant, connectionId: context.connectionId, subscriptionId: parsed.id, filter: parsed.filter, matches: parsed.matches, ceiling: readCeilingOf(parsed.capture, context.principal), from: parsed.from };
  const maxSubscriptions = await subscriptionLimitOf(context.runtime.quotas, tenant, config.limits.maxSubscriptionsPerConnection);
  const overLimit = `a connection may hold at most ${maxSubscriptions} subscriptions (maxSubscriptionsPerConnection)`;
  // Refused on what this frame already read (the connection record), before any write: only a
  // subscribe reusing a held id (a replacement) may go on at the limit. A subscribe racing
  // another on the same connection is still refused by the conditional count in the store.
  if (connection.subscriptionCount >= maxSubscriptions && !(await holdsSubscription(context, parsed.id))) return void (await refuseSubscribe(limitExceeded(overLimit)));
  if (!(await recordSubscription(context.runtime, spec, maxSubscriptions))) {
    await refuseSubscribe(limitExceeded(overLimit));
    return;
  }
  if (!(await answer(context, subscribed(parsed.id)))) return;
  context.answered = true;
  // Answered: from here a failure ends the connection (below), never a second answer.
  const opened = await openSubscription(context.runtime, spec, {
    event: (text) => send(context, text),
    exhausted: (session, earliest) => send(context, JSON.stringify(replayExhausted(parsed.id, session, earliest))),
    // Inside the frame's own budget (`dispatch.ts`), so the replay ends itself before the frame's deadline cuts it.
    deadlineMs: Math.min(context.runtime.now() + SOCKET_REPLAY_BUDGET_MS, context.receivedAtMs + SUBSCRIBE_BUDGET_MS - 2_000),
  }).catch((error: unknown) => {
    context.logger.error('replay failed', { error, subscriptionId: parsed.id });
    return 'failed' as const;
  });
  if (opened === OUT_OF_TIME) {
    // Never left replaying with nothing to end it: the subscription goes, and the consumer,
    // told so, subscribes again after the last position it received.
    await context.runtime.subscriptions.removeSubscription(tenant, context.connectionId, parsed.id);
    await refuseSubscribe(limitExceeded(`the replay did not finish within ${SOCKET_REPLAY_BUDGET_MS / 1000} s; subscribe again from the last position received`));
  } else if (opened === SUBSCRIPTION_GONE) {
    // Taken away while it opened: its `unsubscribe` (run beside this frame, and answered by it),
    // or the connection's end. Nothing failed: the connection stays as it is.
  } else if (opened !== true) {
    // A post of the replay or the handoff was refused (the consumer is gone, or stopped reading:
    // AEP-0003 §8.4, deliver or disconnect), or the store failed. Never left replaying, where
    // fan-out would park its events for good: it is disconnected and resumes from the last
    // position it got.
    await context.runtime.subscriptions.removeSubscription(tenant, context.connectionId, parsed.id).catch(() => undefined);
    await closeConnection(context, opened === 'failed' ? 'unavailable' : 'backpressure');
  }
}

async function holdsSubscription(context: SocketContext, subscriptionId: string): Promise<boolean> {
  return (await context.runtime.subscriptions.subscriptionEntries(context.principal.tenant, context.connectionId, subscriptionId)).length > 0;
}

/**
 * How long a WebSocket replay may run: the socket function has 28 s (API Gateway's integration
 * timeout is 29 s), and the subscription must be removed, and the consumer told, inside it.
 */
export const SOCKET_REPLAY_BUDGET_MS = 20_000;

/**
 * A subscribe's budget from API Gateway's receipt (other frames get `FRAME_BUDGET_MS`): its replay
 * and hand-off to live, then 5 s to say it failed, all inside the function's 28 s.
 */
export const SUBSCRIBE_BUDGET_MS = 22_000;

export async function handleUnsubscribe(context: SocketContext, subscriptionId: string): Promise<void> {
  await context.runtime.subscriptions.removeSubscription(context.principal.tenant, context.connectionId, subscriptionId);
  await answer(context, unsubscribed(subscriptionId));
}
