/** What one `$default` invocation knows about its connection, and the one way it talks back. */
import type { Principal } from '../../auth/principal.ts';
import type { Logger } from '../../observability/logger.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { CardCheckDeps } from '../identity/card-check.ts';
import type { IngestDeps } from '../ingest/ingest.ts';
import type { OwnershipDeps } from '../control/session-ownership.ts';
import type { FrameBudgets } from './frame-budget.ts';

/** What the WebSocket binding's use cases use together: ingest, hello and its card, subscribe, commands, roster. */
export type SocketDeps = IngestDeps &
  CardCheckDeps &
  OwnershipDeps &
  Pick<RelayPorts, 'claims' | 'connections' | 'deadlines' | 'parking' | 'poster' | 'sessionOrder' | 'subscriptions'> & { frameBudgets: FrameBudgets };
import { closing } from '../../protocol/frames.ts';
import type { PostOutcome } from '../ports/connection-poster.ts';

export interface SocketContext {
  runtime: SocketDeps;
  logger: Logger;
  principal: Principal;
  connectionId: string;
  /** When API Gateway received this frame (ms); orders it against the connection's hello. */
  receivedAtMs: number;
  /** This frame's invocation (its request id): marks the state changes it writes (`ConnectionsPort.recordHello`). */
  requestId: string;
  /** Set once the frame's own answer went out (a `subscribed`): a failure after it never answers it twice. */
  answered?: boolean;
}

/**
 * Sends one frame or event text; false when it was not sent. A gone connection is cleaned up;
 * a post the gateway refuses outright (413 over its message limit, or another non-retryable
 * answer) is logged and reported as false, so the caller can answer in-band instead of the
 * whole invocation failing.
 */
export async function send(context: SocketContext, frame: object | string): Promise<boolean> {
  return (await post(context, frame)) === 'sent';
}

/**
 * Sends the answer to a client's frame (AEP-0003 §6.5: each request gets one). An answer the
 * gateway could not take at all (every attempt timed out or was throttled) ends the connection:
 * a client that heard nothing would wait in silence; told by the close, it resends what it did
 * not hear about (AEP-0003 §3).
 */
export async function answer(context: SocketContext, frame: object | string): Promise<boolean> {
  const outcome = await post(context, frame);
  if (outcome === 'throttled') {
    context.logger.warn('answer not delivered, closing the connection', { connectionId: context.connectionId });
    await context.runtime.poster.close(context.connectionId).catch(() => undefined);
  }
  return outcome === 'sent';
}

async function post(context: SocketContext, frame: object | string): Promise<PostOutcome | 'refused'> {
  const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
  let outcome;
  try {
    outcome = await context.runtime.poster.post(context.connectionId, text);
  } catch (error) {
    context.logger.warn('post refused', { error, connectionId: context.connectionId, bytes: Buffer.byteLength(text, 'utf8') });
    return 'refused';
  }
  if (outcome === 'gone') await context.runtime.connections.removeConnection(context.principal.tenant, context.connectionId);
  return outcome;
}

/** Closes the connection deliberately: an orderly `closing` frame first (AEP-0003 §3.5.4), then the close. */
export async function closeConnection(context: SocketContext, reason: string): Promise<void> {
  await context.runtime.poster.post(context.connectionId, JSON.stringify(closing(reason, [])));
  await context.runtime.poster.close(context.connectionId);
}
