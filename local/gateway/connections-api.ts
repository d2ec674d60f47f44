/**
 * The local `@connections` management endpoint (the API Gateway Management API), so the
 * handlers' real `ApiGatewayManagementApiClient({ endpoint })` reaches local sockets unchanged:
 * `POST /@connections/{id}` sends the body as one message, `GET` describes the connection,
 * `DELETE` closes it.
 *
 * Errors carry `x-amzn-errortype` and a JSON `message`, which is how the SDK's REST-JSON
 * protocol picks the exception class: 410 `GoneException` for an unknown or closed connection
 * (including one whose `$connect` has not completed), 413 `PayloadTooLargeException` over the
 * 128 KB message quota, and 429 `LimitExceededException` when the client's buffer is full
 * ("The client is sending more than the allowed number of requests per unit of time or the
 * WebSocket client side buffer is full"), which here means the socket's unsent backlog is over
 * a threshold: a consumer that cannot keep up, so the relay's backpressure path is testable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebSocket } from 'ws';
import type { ConnectionRegistry, LocalConnection } from './connection-registry.ts';
import { WEBSOCKET_QUOTAS } from './websocket-api.ts';

export interface ConnectionsApiOptions {
  connections: ConnectionRegistry;
  /** Unsent bytes on a socket above which a post answers 429. Default 1 MiB. */
  maxBufferedBytes?: number;
  maxMessageBytes?: number;
  /** API Gateway sends a message over the frame quota as several frames of at most this size. */
  maxFrameBytes?: number;
  /**
   * Simulated PostToConnection round trip (ms), read per call so a run can change it: each
   * post waits this long before it is sent and answered, without holding up other posts
   * (about 20 ms in-region on AWS; `npm run bench` measures fan-out at 20 and 50).
   */
  postDelayMs?: () => number;
  /** Told of every PostToConnection call and the status it answered (usage counters, `npm run bench`). */
  onPost?: (status: 200 | 410 | 413 | 429) => void;
}

/** The gateway's `/@connections/{id}` hook. */
export type ConnectionsApi = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;

/** Largest body read at all; beyond it the request is cut rather than drained. */
const READ_LIMIT = 10 * 1024 * 1024;

export function createConnectionsApi(options: ConnectionsApiOptions): ConnectionsApi {
  const maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
  const maxMessageBytes = options.maxMessageBytes ?? WEBSOCKET_QUOTAS.maxMessageBytes;
  const maxFrameBytes = options.maxFrameBytes ?? WEBSOCKET_QUOTAS.maxFrameBytes;

  return async (request, response, url) => {
    // The SDK URL-encodes the id (ids may hold `/`, `+` and `=`).
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(url.pathname.slice('/@connections/'.length));
    } catch {
      connectionId = '';
    }
    // The whole body is read before answering, so an early error never resets a client still sending.
    const body = await readWholeBody(request, maxMessageBytes);
    const delayMs = request.method === 'POST' ? (options.postDelayMs?.() ?? 0) : 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const connection = openConnection(options.connections, connectionId);
    switch (request.method) {
      case 'POST': {
        const status = connection === undefined ? 410 : body === 'too-large' ? 413 : connection.socket.bufferedAmount > maxBufferedBytes ? 429 : 200;
        options.onPost?.(status);
        if (connection === undefined) return gone(response, connectionId);
        if (body === 'too-large') return fail(response, 413, 'PayloadTooLargeException', 'Message too long');
        if (connection.socket.bufferedAmount > maxBufferedBytes) return fail(response, 429, 'LimitExceededException', 'Limit exceeded');
        sendAsFrames(connection.socket, body, maxFrameBytes);
        response.writeHead(200, { 'content-length': '0' }).end();
        return;
      }
      case 'GET': {
        if (connection === undefined) return gone(response, connectionId);
        // Member names as the SDK's GetConnection deserializer reads them (camelCase JSON names).
        const payload = JSON.stringify({
          connectedAt: new Date(connection.connectedAt).toISOString(),
          identity: { sourceIp: connection.sourceIp, userAgent: connection.userAgent },
          lastActiveAt: new Date(connection.lastActiveAt).toISOString(),
        });
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }).end(payload);
        return;
      }
      case 'DELETE': {
        if (connection === undefined) return gone(response, connectionId);
        // The close event then runs $disconnect, as API Gateway does after DeleteConnection.
        connection.socket.close(1000);
        response.writeHead(204).end();
        return;
      }
      default:
        return fail(response, 400, 'BadRequestException', `Unsupported method ${request.method ?? ''}`);
    }
  };
}

/** The connection if it is open; one that is closing is already gone for the management API. */
function openConnection(registry: ConnectionRegistry, connectionId: string): LocalConnection | undefined {
  const connection = registry.get(connectionId);
  return connection !== undefined && connection.socket.readyState === WebSocket.OPEN ? connection : undefined;
}

/** PostToConnection data goes out as a text message, split into frames within the frame quota. */
function sendAsFrames(socket: WebSocket, data: Buffer, maxFrameBytes: number): void {
  if (data.length <= maxFrameBytes) {
    socket.send(data, { binary: false });
    return;
  }
  for (let offset = 0; offset < data.length; offset += maxFrameBytes) {
    const end = Math.min(offset + maxFrameBytes, data.length);
    socket.send(data.subarray(offset, end), { binary: false, fin: end === data.length });
  }
}

function gone(response: ServerResponse, connectionId: string): void {
  fail(response, 410, 'GoneException', `Connection ${connectionId} is gone`);
}

function fail(response: ServerResponse, statusCode: number, errorType: string, message: string): void {
  const payload = JSON.stringify({ message });
  response
    .writeHead(statusCode, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      'x-amzn-errortype': errorType,
    })
    .end(payload);
}

/** The body, or `too-large` past `limit` (the rest is still read, up to READ_LIMIT, and dropped). */
async function readWholeBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > READ_LIMIT) {
      request.destroy();
      return 'too-large';
    }
    if (size <= limit) chunks.push(chunk as Buffer);
  }
  return size > limit ? 'too-large' : Buffer.concat(chunks);
}
