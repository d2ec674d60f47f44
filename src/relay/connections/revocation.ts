/**
 * Ending the open connections of a token that stopped being good (revoked, its tenant
 * disabled, expired). A WebSocket connection gets a `closing` frame naming the reason
 * (AEP-0003 §3.5.4) and is closed; its state is removed. An SSE stream has no address to
 * close, so it is told through its inbox, which it polls several times a second
 * (`sse.pollMs`), and ends itself with a `: closing: {reason}` comment.
 *
 * Racing a `$connect` (or stream open) authorized just before the revoke: the revoker writes
 * first and lists connections second; an opening connection records itself first and checks
 * the token second (`confirmStillActive`). With strongly consistent reads on both sides, at
 * least one of them sees the other, so no connection opened with a revoked token stays open.
 */
import type { Principal } from '../../auth/principal.ts';
import { closing } from '../../protocol/frames.ts';
import { isSseStreamId } from '../domain/sse-stream-id.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';

/** What ending a token's connections reaches: its sockets (posted and closed) and its streams (told through the inbox). */
export type RevocationDeps = Pick<RelayPorts, 'connections' | 'inbox' | 'poster' | 'tokens'>;

export type EndReason = 'token-revoked' | 'tenant-disabled' | 'token-expired' | 'card-expired' | 'backpressure';

/** What ending a token's connections reached, counted apart: a socket is closed, a stream is told and ends itself. */
export interface ConnectionsEnded {
  sockets: number;
  streams: number;
}

/**
 * Ends every connection and stream of a token; returns how many of each were reached. Sockets
 * are reached only where the runtime can post to them (`sockets`); streams always are.
 */
export async function endConnectionsOfToken(runtime: RevocationDeps, tenant: string, tokenId: string, reason: EndReason, reach: { sockets: boolean }): Promise<ConnectionsEnded> {
  const ids = await runtime.connections.connectionsOfToken(tenant, tokenId);
  const streams = ids.filter(isSseStreamId);
  const sockets = reach.sockets ? ids.filter((id) => !isSseStreamId(id)) : [];
  await Promise.all([
    ...streams.map((streamId) => runtime.inbox.notifyClosing(tenant, streamId, reason)),
    ...sockets.map((connectionId) => endSocket(runtime, tenant, connectionId, reason)),
  ]);
  return { sockets: sockets.length, streams: streams.length };
}

/** Sends a socket the `closing` frame, closes it and removes its state. */
export async function endSocket(runtime: Pick<RelayPorts, 'connections' | 'poster'>, tenant: string, connectionId: string, reason: EndReason): Promise<void> {
  const outcome = await runtime.poster.post(connectionId, JSON.stringify(closing(reason, []))).catch(() => 'gone' as const);
  if (outcome !== 'gone') await runtime.poster.close(connectionId).catch(() => undefined);
  await runtime.connections.removeConnection(tenant, connectionId);
}

/**
 * Called after a connection or stream recorded itself: true when its token is still good.
 * When it is not, the caller removes what it recorded and refuses.
 */
export async function confirmStillActive(runtime: Pick<RelayPorts, 'tokens'>, principal: Principal): Promise<boolean> {
  return runtime.tokens.isActive(principal.tenant, principal.tokenId);
}
