/**
 * SSE streams hold subscriptions like WebSocket connections do, under a relay-minted id.
 * The prefix cannot occur in an API Gateway connection id (standard base64 has no `-`), so
 * fan-out can tell where a delivery goes.
 */
export const SSE_STREAM_PREFIX = 'sse-';

export function isSseStreamId(connectionId: string): boolean {
  return connectionId.startsWith(SSE_STREAM_PREFIX);
}

export function sseStreamId(ulid: string): string {
  return `${SSE_STREAM_PREFIX}${ulid}`;
}
