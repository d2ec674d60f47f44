/**
 * How the WebSocket binding answers a refusal: the one place its `error` frames are built.
 * Handlers return or throw refusals (`RelayError`) and say what they answer; this module turns
 * them into the frame (AEP-0003 §2: `id` for a request frame, `cause` for an event or command,
 * neither for the connection itself), and closes the connection after a refusal that ends it.
 */
import type { ClientMessage } from '../../protocol/client-message.ts';
import { errorFrame } from '../../protocol/frames.ts';
import type { ErrorFrame } from '../../protocol/frames.ts';
import { RelayError } from '../../errors/relay-error.ts';
import type { ConnectionState } from '../domain/connection.ts';
import { answer, closeConnection } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

/** What a refusal answers: a request frame (its `id`), an event or command (its id, as `cause`), or the connection. */
export type Answering = { id: string } | { cause: string } | 'connection';

/** What a client frame's refusal answers; undefined for frames never answered (pong, closing, unknown types). */
export function answeringOf(message: ClientMessage | undefined): Answering | undefined {
  switch (message?.kind) {
    case 'pong':
    case 'closing':
    case 'unknown-frame':
      return undefined;
    case 'subscribe':
      return { id: message.subscribe.id };
    case 'unsubscribe':
    case 'roster':
      return { id: message.id };
    case 'event': {
      const id = message.value.id;
      return typeof id === 'string' && id !== '' ? { cause: id } : 'connection';
    }
    case 'invalid-frame':
      return message.id === undefined ? 'connection' : { id: message.id };
    default:
      return 'connection';
  }
}

/** The `error` frame of a refusal. */
export function refusalFrame(refusal: RelayError, answering: Answering): ErrorFrame {
  const versions = refusal.extra?.versions;
  return errorFrame({
    code: refusal.code,
    ...(answering === 'connection' ? {} : answering),
    ...(refusal.detail === undefined ? {} : { detail: refusal.detail }),
    ...(Array.isArray(versions) ? { versions: versions.map(String) } : {}),
  });
}

/** Sends the refusal; one that ends the connection is followed by `closing` and the close. */
export async function refuse(context: SocketContext, refusal: RelayError, answering: Answering): Promise<void> {
  await answer(context, refusalFrame(refusal, answering));
  if (refusal.endsConnection) await closeConnection(context, refusal.code);
}

/**
 * Refuses the connection itself, if it is still in one of `from`: a conditional state change
 * first, so a frame racing it (a hello, another refusal) either wins or changes nothing; true
 * when this call refused it.
 */
export async function refuseConnection(context: SocketContext, refusal: RelayError, from: ConnectionState[]): Promise<boolean> {
  if (!(await context.runtime.connections.transition(context.principal.tenant, context.connectionId, from, 'rejected', context.requestId))) return false;
  await refuse(context, refusal.endsConnection ? refusal : new RelayError(refusal.code, refusal.status, refusal.detail, refusal.extra, { endsConnection: true }), 'connection');
  return true;
}
