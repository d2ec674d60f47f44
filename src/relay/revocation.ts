/**
 * Revocation of a token reaches open connections: every WebSocket connection opened with it
 * gets a `closing` frame and is closed (its `$disconnect` then removes its state). SSE
 * streams cannot be closed from outside; each re-validates its token on an interval
 * (`sse.revalidateMs`) and ends itself.
 */
import { closing } from '../protocol/frames.ts';
import { isSseStreamId } from './sse/sse-stream-id.ts';
import type { RelayRuntime } from './runtime.ts';

export async function closeConnectionsOfToken(runtime: RelayRuntime, tenant: string, tokenId: string): Promise<number> {
  const connectionIds = (await runtime.connections.connectionsOfToken(tenant, tokenId)).filter((id) => !isSseStreamId(id));
  await Promise.all(
    connectionIds.map(async (connectionId) => {
      const outcome = await runtime.poster.post(connectionId, JSON.stringify(closing('token-revoked', []))).catch(() => 'gone' as const);
      if (outcome !== 'gone') await runtime.poster.close(connectionId).catch(() => undefined);
      await runtime.connections.removeConnection(tenant, connectionId);
    }),
  );
  return connectionIds.length;
}
