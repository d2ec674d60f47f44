/**
 * Dispatches one inbound WebSocket message (`$default`) to its handler. Every frame first
 * passes the connection's frame budget (`frame-budget.ts`: over it, answered before any
 * DynamoDB call); every frame except `hello` then passes the hello gate; unknown frame types
 * are ignored (AEP-0003 §2). A request frame whose handling fails (storage throttled or down
 * past the SDK's retries) is still answered once (AEP-0003 §6.5), never left in silence.
 */
import { parseClientMessage } from '../../protocol/client-message.ts';
import type { ClientMessage } from '../../protocol/client-message.ts';
import { errorFrame, INVALID_HELLO, pong } from '../../protocol/frames.ts';
import { overBudgetRefusal } from './frame-budget.ts';
import { awaitOpenConnection } from './hello-gate.ts';
import { handleEvent } from './handle-event.ts';
import { handleHello } from './handle-hello.ts';
import { handleRoster } from './handle-roster.ts';
import { handleSubscribe, handleUnsubscribe } from './handle-subscribe.ts';
import { DeadlinePassed, withinDeadline } from '../ports/work-deadline.ts';
import { closeConnection, send } from './socket-context.ts';
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

const framesInFlight = new WeakMap<object, number>();

export async function dispatchMessage(context: SocketContext, body: string, isBinary: boolean): Promise<void> {
  const message = isBinary ? undefined : parseClientMessage(body);
  const { runtime } = context;
  const inFlight = framesInFlight.get(runtime) ?? 0;
  if (inFlight >= MAX_FRAMES_IN_FLIGHT) {
    await answerFailure(context, message);
    return;
  }
  framesInFlight.set(runtime, inFlight + 1);
  try {
    await withinDeadline(context.receivedAtMs + FRAME_BUDGET_MS, runtime.now, () => dispatchParsed(context, message, body));
  } catch (error) {
    context.logger.error(error instanceof DeadlinePassed ? 'frame ran out of time' : 'frame failed', { error, kind: message?.kind });
    // The answer gets a bound of its own, so the invocation ends inside its timeout either way.
    await withinDeadline(runtime.now() + ANSWER_BUDGET_MS, runtime.now, () => answerFailure(context, message)).catch((answerError: unknown) => context.logger.error('could not answer a failed frame', { error: answerError, kind: message?.kind }));
  } finally {
    framesInFlight.set(runtime, (framesInFlight.get(runtime) ?? 1) - 1);
  }
}

/** The one answer a request frame still gets when handling it failed. */
async function answerFailure(context: SocketContext, message: ClientMessage | undefined): Promise<void> {
  const detail = 'the relay could not handle this frame now (it is overloaded, or its store is throttled or unavailable); send it again';
  switch (message?.kind) {
    case 'hello':
      // Nothing was negotiated: the client connects again.
      await send(context, errorFrame({ code: 'unavailable', detail }));
      await closeConnection(context, 'unavailable');
      return;
    case 'subscribe':
      // §6.5's closed set: an endpoint resource (its store's throughput) is what ran out.
      await send(context, errorFrame({ code: 'limit-exceeded', id: message.subscribe.id, detail }));
      return;
    case 'unsubscribe':
    case 'roster':
      await send(context, errorFrame({ code: 'unavailable', id: message.id, detail }));
      return;
    case 'event': {
      context.runtime.metrics.count('EventsRefused', context.principal.tenant, 1, { code: 'unavailable' });
      const cause = typeof message.value.id === 'string' ? message.value.id : undefined;
      await send(context, errorFrame({ code: 'unavailable', ...(cause === undefined ? {} : { cause }), detail: 'the relay could not store the event now (it is overloaded, or its store is unavailable); resend the event with the same id' }));
      return;
    }
    default:
      return;
  }
}

async function dispatchParsed(context: SocketContext, message: ClientMessage | undefined, body: string): Promise<void> {
  const { runtime } = context;
  if (!runtime.frameBudgets.take(context.connectionId)) {
    const refusal = overBudgetRefusal(message, runtime.config.limits.socketFramesPerSecond);
    if (message?.kind === 'event') runtime.metrics.count('EventsRefused', context.principal.tenant, 1, { code: 'limit-exceeded' });
    if (refusal !== undefined) await send(context, refusal);
    return;
  }
  if (message?.kind === 'hello') return handleHello(context, message.hello);
  if (message?.kind === 'invalid-frame' && message.code === INVALID_HELLO) {
    // A malformed hello as the first frame leaves nothing to negotiate: refuse and close.
    const refused = await context.runtime.connections.transition(context.principal.tenant, context.connectionId, ['connected'], 'rejected', context.requestId);
    await send(context, errorFrame({ code: INVALID_HELLO, detail: message.detail }));
    if (refused) await closeConnection(context, INVALID_HELLO);
    return;
  }
  const connection = await awaitOpenConnection(context);
  if (connection === undefined) return;
  if (message === undefined) {
    await send(context, errorFrame({ code: 'invalid-frame', detail: 'binary frames are reserved in AEP 0.1 (AEP-0003 §3.5.2); send text frames' }));
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
      await send(context, pong(message.t));
      return;
    case 'malformed':
      await send(context, errorFrame({ code: 'invalid-frame', detail: message.detail }));
      return;
    case 'invalid-frame':
      await send(context, errorFrame({ code: message.code, ...(message.id === undefined ? {} : { id: message.id }), detail: message.detail }));
      return;
    case 'pong':
    case 'closing':
    case 'unknown-frame':
      return;
  }
}
