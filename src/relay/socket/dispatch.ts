/**
 * Dispatches one inbound WebSocket message (`$default`) to its handler. Every frame first
 * passes the connection's frame budget (`frame-budget.ts`: over it, answered before any
 * DynamoDB call); every frame except `hello` then passes the hello gate; unknown frame types
 * are ignored (AEP-0003 §2). A request frame whose handling fails (storage throttled or down
 * past the SDK's retries) is still answered once (AEP-0003 §6.5), never left in silence.
 */
import { parseClientMessage } from '../../protocol/client-message.ts';
import type { ClientMessage } from '../../protocol/client-message.ts';
import { pong } from '../../protocol/frames.ts';
import { invalidFrame, invalidHello, limitExceeded, refusal, unavailable } from '../../errors/relay-error.ts';
import { answeringOf, refuse, refuseConnection } from './socket-refusals.ts';
import { overBudgetRefusal } from './frame-budget.ts';
import { awaitOpenConnection } from './hello-gate.ts';
import { handleEvent } from './handle-event.ts';
import { handleHello } from './handle-hello.ts';
import { handleRoster } from './handle-roster.ts';
import { handleSubscribe, handleUnsubscribe, SUBSCRIBE_BUDGET_MS } from './handle-subscribe.ts';
import { DeadlinePassed, withinDeadline } from '../ports/work-deadline.ts';
import { answer } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

/**
 * How long a frame may take, from API Gateway's receipt of it: well inside API Gateway's
 * integration timeout (29 s) and the function's own (28 s), so that a frame the relay cannot
 * handle in time is refused in-band (`unavailable`, with the event's id; `limit-exceeded` for a
 * subscribe) while there is still time to say so.
 */
export const FRAME_BUDGET_MS = 10_000;

/**
 * Frames one process handles at once; past it a frame is refused at once, before any DynamoDB
 * call. A Lambda instance runs one invocation at a time, so this binds only where one process
 * serves every connection (the local stack): its queue of DynamoDB calls stays bounded.
 */
export const MAX_FRAMES_IN_FLIGHT = 400;

/** How long answering a frame that failed may take, after its budget (the two inside the function's 28 s). */
const ANSWER_BUDGET_MS = 15_000;
/** The last moment, from receipt, an answer may still be going out: inside the function's 28 s. */
const LAST_ANSWER_MS = 27_000;

const framesInFlight = new WeakMap<object, number>();

/**
 * Connections this process saw past their hello (the newest few thousand): a frame shed at the
 * in-flight cap on one of them is answered on its own, with no store call to learn so.
 */
const pastTheirHello = new WeakMap<object, Set<string>>();
const PAST_THEIR_HELLO_KEPT = 4_096;
function rememberPastTheHello(context: SocketContext): void {
  let known = pastTheirHello.get(context.runtime);
  if (known === undefined) pastTheirHello.set(context.runtime, (known = new Set()));
  known.add(context.connectionId);
  if (known.size > PAST_THEIR_HELLO_KEPT) known.delete(known.values().next().value as string);
}

export async function dispatchMessage(context: SocketContext, body: string, isBinary: boolean): Promise<void> {
  const message = isBinary ? undefined : parseClientMessage(body);
  const { runtime } = context;
  const inFlight = framesInFlight.get(runtime) ?? 0;
  // Whether this frame got past the hello gate: only then has the relay's hello gone out.
  const frame = { pastTheHello: pastTheirHello.get(runtime)?.has(context.connectionId) === true };
  // The answer gets a bound of its own, so the invocation ends inside its timeout either way.
  const answer = () =>
    // Never past the function's own timeout (28 s from about the receipt).
    withinDeadline(Math.min(runtime.now() + ANSWER_BUDGET_MS, context.receivedAtMs + LAST_ANSWER_MS), runtime.now, () => answerFailure(context, message, frame.pastTheHello)).catch(async (answerError: unknown) => {
      context.logger.error('could not answer a failed frame', { error: answerError, kind: message?.kind });
      // Never left unanswered in silence: a connection whose frame can be neither handled nor
      // refused in time is closed, and the client resends what it did not hear about.
      await runtime.poster.close(context.connectionId).catch(() => undefined);
    });
  if (inFlight >= MAX_FRAMES_IN_FLIGHT) {
    await answer();
    return;
  }
  framesInFlight.set(runtime, inFlight + 1);
  try {
    const budgetMs = message?.kind === 'subscribe' ? SUBSCRIBE_BUDGET_MS : FRAME_BUDGET_MS;
    await withinDeadline(context.receivedAtMs + budgetMs, runtime.now, () => dispatchParsed(context, message, body, frame));
  } catch (error) {
    context.logger.error(error instanceof DeadlinePassed ? 'frame ran out of time' : 'frame failed', { error, kind: message?.kind });
    await answer();
  } finally {
    framesInFlight.set(runtime, (framesInFlight.get(runtime) ?? 1) - 1);
  }
}

/**
 * The one answer a request frame still gets when handling it failed. A frame that failed before
 * it knew the relay's hello went out cannot be answered on its own (the relay's first frame is
 * its hello, AEP-0003 §3.5.1): the connection is ended instead, with no store call (the store may
 * be what failed), and the client connects again.
 */
async function answerFailure(context: SocketContext, message: ClientMessage | undefined, pastTheHello: boolean): Promise<void> {
  const detail = 'the relay could not handle this frame now (it is overloaded, or its store is throttled or unavailable); send it again';
  // Answered already (a subscribe whose replay then failed): it ends the connection itself, never a second answer.
  if (context.answered === true) return;
  if (!pastTheHello && message !== undefined && message.kind !== 'hello' && answeringOf(message) !== undefined) {
    return refuse(context, refusal('unavailable', `${detail} on a new connection`, undefined, { endsConnection: true }), 'connection');
  }
  switch (message?.kind) {
    case 'hello':
      // Nothing was negotiated: the client connects again.
      return refuse(context, refusal('unavailable', detail, undefined, { endsConnection: true }), 'connection');
    case 'subscribe':
      // §6.5's closed set: an endpoint resource (its store's throughput) is what ran out.
      return refuse(context, limitExceeded(detail), { id: message.subscribe.id });
    case 'unsubscribe':
    case 'roster':
      return refuse(context, unavailable(detail), { id: message.id });
    case 'event':
      context.runtime.metrics.count('EventsRefused', context.principal.tenant, 1, { code: 'unavailable' });
      return refuse(context, unavailable('the relay could not store the event now (it is overloaded, or its store is unavailable); resend the event with the same id'), answeringOf(message) ?? 'connection');
    default:
      return;
  }
}

async function dispatchParsed(context: SocketContext, message: ClientMessage | undefined, body: string, frame: { pastTheHello: boolean }): Promise<void> {
  const { runtime } = context;
  if (!runtime.frameBudgets.take(context.connectionId)) {
    const answering = answeringOf(message);
    if (message?.kind === 'event') runtime.metrics.count('EventsRefused', context.principal.tenant, 1, { code: 'limit-exceeded' });
    if (answering !== undefined) await refuse(context, overBudgetRefusal(runtime.config.limits.socketFramesPerSecond), answering);
    return;
  }
  if (message?.kind === 'hello') return handleHello(context, message.hello);
  if (message?.kind === 'invalid-frame' && message.code === 'invalid-hello') {
    // A malformed hello as the first frame leaves nothing to negotiate: refuse and close. After
    // the hello exchange it is answered and the connection goes on.
    if (!(await refuseConnection(context, invalidHello(message.detail), ['connected']))) await refuse(context, refusal('invalid-hello', message.detail, undefined, { endsConnection: false }), 'connection');
    return;
  }
  const connection = await awaitOpenConnection(context);
  if (connection === undefined) return;
  frame.pastTheHello = true;
  rememberPastTheHello(context);
  if (message === undefined) {
    await refuse(context, invalidFrame('binary frames are reserved in AEP 0.1 (AEP-0003 §3.5.2); send text frames'), 'connection');
    return;
  }
  switch (message.kind) {
    case 'event':
      return handleEvent(context, connection, body, message.value);
    case 'subscribe':
      return handleSubscribe(context, connection, message.subscribe);
    case 'unsubscribe':
      return handleUnsubscribe(context, message.id);
    case 'roster':
      return handleRoster(context, connection, message.id);
    case 'ping':
      await answer(context, pong(message.t));
      return;
    case 'malformed':
      await refuse(context, invalidFrame(message.detail), 'connection');
      return;
    case 'invalid-frame':
      await refuse(context, refusal(message.code, message.detail, undefined, { endsConnection: false }), answeringOf(message) ?? 'connection');
      return;
    case 'pong':
    case 'closing':
    case 'unknown-frame':
      return;
  }
}
