/**
 * The WebSocket API part of the local API Gateway, on the gateway's `/socket` upgrade. It runs
 * the `$connect` authorizer and route before completing the handshake, invokes `$default` for
 * every message and `$disconnect` once per connection, and enforces the quotas that make
 * API Gateway close a connection.
 *
 * Faithful where the cloud bites:
 * - A connection's messages are invoked concurrently, each after a small random delay: API
 *   Gateway documents no per-connection ordering, so the relay must not rely on one.
 * - The handshake completes only after `$connect` returns 2xx, so a post from the `$connect`
 *   handler finds no open connection (410), as in the cloud.
 * - Frames over 32 KiB and messages over 128 KiB close the connection with 1009; 10 minutes
 *   without a client message or 2 hours in all close it with 1001 ("Quotas for configuring
 *   and running a WebSocket API in API Gateway").
 * - `$disconnect` is best effort: its failures are logged, never surfaced.
 */
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'aws-lambda';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';
import type { RelayAuthorizerContext, WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import { lambdaContext } from '../lambda-context.ts';
import { ConnectionRegistry } from './connection-registry.ts';
import type { LocalConnection } from './connection-registry.ts';
import { FrameSizeGuard } from './frame-size-guard.ts';
import { handshakeProblem } from './handshake-validation.ts';
import { runAuthorizer } from './websocket-authorizer.ts';
import type { WebSocketAuthorizerHandler } from './websocket-authorizer.ts';
import { authorizerEventOf, connectEventOf, disconnectEventOf, handshakeOf, messageEventOf, mintApiGatewayId } from './websocket-events.ts';
import type { Handshake } from './websocket-events.ts';

/** The relay's WebSocket route handler (`functions/socket`), serving `$connect`, `$default` and `$disconnect`. */
export type WebSocketRouteHandler = (event: WebSocketRouteEvent, context: Context) => Promise<WebSocketRouteResult | undefined>;

/** API Gateway's WebSocket quotas (none can be raised). */
export const WEBSOCKET_QUOTAS = {
  maxFrameBytes: 32 * 1024,
  maxMessageBytes: 128 * 1024,
  idleTimeoutMs: 10 * 60 * 1000,
  maxConnectionMs: 2 * 60 * 60 * 1000,
  /** Integration timeout: the longest a route invocation may run. */
  integrationTimeoutMs: 29_000,
} as const;

/** Close codes API Gateway uses when it ends a connection itself. */
const GOING_AWAY = 1001;
const MESSAGE_TOO_BIG = 1009;

export interface WebSocketApiOptions {
  route: WebSocketRouteHandler;
  /** The `$connect` REQUEST authorizer; without one every handshake reaches `$connect`. */
  authorizer?: WebSocketAuthorizerHandler;
  /** Region in the authorizer's `methodArn`. */
  region?: string;
  /** Upper bound of the random delay before each invocation (ms); 0 turns it off. Default 5. */
  invokeJitterMs?: number;
  /**
   * Extra delay before invoking `$default` for a text frame whose JSON `type` is `hello` (ms),
   * standing in for a cold start of the hello's own invocation. Default 0.
   */
  helloInvokeDelayMs?: number;
  idleTimeoutMs?: number;
  maxConnectionMs?: number;
  maxFrameBytes?: number;
  maxMessageBytes?: number;
  /** Connection ids; API Gateway style by default (tests pin ids with `/` and `+`). */
  mintConnectionId?: () => string;
  /** Where invocation failures are reported; JSON lines on stderr by default. */
  log?: (message: string, detail: Record<string, unknown>) => void;
}

/** A running local WebSocket API. */
export interface WebSocketApi {
  /** The gateway's `/socket` upgrade hook. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void;
  /** Open connections, for the `@connections` endpoint. */
  connections: ConnectionRegistry;
  /** Refuses new handshakes, closes every connection (1001), and waits for all invocations, `$disconnect` included. */
  close(): Promise<void>;
}

export function createWebSocketApi(options: WebSocketApiOptions): WebSocketApi {
  const maxFrameBytes = options.maxFrameBytes ?? WEBSOCKET_QUOTAS.maxFrameBytes;
  const maxMessageBytes = options.maxMessageBytes ?? WEBSOCKET_QUOTAS.maxMessageBytes;
  const idleTimeoutMs = options.idleTimeoutMs ?? WEBSOCKET_QUOTAS.idleTimeoutMs;
  const maxConnectionMs = options.maxConnectionMs ?? WEBSOCKET_QUOTAS.maxConnectionMs;
  const jitterMs = options.invokeJitterMs ?? 5;
  const helloDelayMs = options.helloInvokeDelayMs ?? 0;
  const region = options.region ?? 'us-east-1';
  const mintConnectionId = options.mintConnectionId ?? mintApiGatewayId;
  const log = options.log ?? ((message, detail) => console.error(JSON.stringify({ level: 'error', component: 'local-websocket-api', message, ...detail })));
  // The subprotocol `$connect` chose, per handshake request: API Gateway answers with a
  // Sec-WebSocket-Protocol only when the `$connect` integration returns that header.
  const chosenProtocols = new WeakMap<IncomingMessage, string>();
  // API Gateway does not negotiate permessage-deflate, so frame sizes on the wire are payload sizes.
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: maxMessageBytes,
    perMessageDeflate: false,
    handleProtocols: (_offered, request) => chosenProtocols.get(request) ?? false,
  });
  // Should `ws` still refuse an upgrade $connect accepted, the connection's $disconnect runs
  // (its state and slot were taken); with this listener `ws` leaves the answer to us.
  const upgrading = new WeakMap<IncomingMessage, { shake: Handshake; authorizer: RelayAuthorizerContext | undefined }>();
  server.on('wsClientError', (error: Error, socket: Duplex, request: IncomingMessage) => {
    refuseHandshake(socket, 400, JSON.stringify({ message: 'Bad Request' }));
    const accepted = upgrading.get(request);
    if (accepted === undefined) return;
    log('upgrade refused after $connect', { connectionId: accepted.shake.connectionId, error: error.message });
    void disconnect(accepted.shake, accepted.authorizer, 1006, 'Upgrade refused');
  });
  const connections = new ConnectionRegistry();
  const inFlight = new Set<Promise<unknown>>();
  let closing = false;

  /** Runs `work` and keeps track of it until it settles, so `close()` can wait for it. */
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    void work.then(
      () => inFlight.delete(work),
      () => inFlight.delete(work),
    );
    return work;
  };

  const invoke = async (event: WebSocketRouteEvent): Promise<WebSocketRouteResult | undefined> => {
    if (jitterMs > 0) await sleep(Math.random() * jitterMs);
    if (helloDelayMs > 0 && isHelloFrame(event)) await sleep(helloDelayMs);
    return options.route(event, lambdaContext('aep-relay-socket', WEBSOCKET_QUOTAS.integrationTimeoutMs));
  };

  const disconnect = (handshake: Handshake, authorizer: RelayAuthorizerContext | undefined, code: number, reason: string): Promise<void> =>
    track(
      invoke(disconnectEventOf(handshake, authorizer, code, reason)).then(
        () => undefined,
        (error: unknown) => log('$disconnect failed', { connectionId: handshake.connectionId, error: String(error) }),
      ),
    );

  const open = (socket: Duplex, ws: WebSocket, handshake: Handshake, authorizer: RelayAuthorizerContext | undefined): void => {
    const connection: LocalConnection = {
      connectionId: handshake.connectionId,
      socket: ws,
      connectedAt: handshake.connectedAt,
      lastActiveAt: handshake.connectedAt,
      sourceIp: handshake.sourceIp,
      userAgent: handshake.userAgent,
    };
    connections.add(connection);
    const goAway = () => ws.close(GOING_AWAY, 'Going away');
    const idleTimer = setTimeout(goAway, idleTimeoutMs);
    const lifetimeTimer = setTimeout(goAway, maxConnectionMs);
    idleTimer.unref();
    lifetimeTimer.unref();

    // Prepended so the header is seen before `ws` parses (and possibly delivers) the frame.
    const guard = new FrameSizeGuard(maxFrameBytes);
    socket.prependListener('data', (chunk: Buffer) => {
      if (guard.inspect(chunk) !== undefined && ws.readyState === WebSocket.OPEN) ws.close(MESSAGE_TOO_BIG, 'Frame too big');
    });

    ws.on('message', (data: RawData, isBinary: boolean) => {
      // Once a close has started (a quota was hit, or the client or the API closed), nothing more is routed.
      if (ws.readyState !== WebSocket.OPEN) return;
      connection.lastActiveAt = Date.now();
      idleTimer.refresh();
      const event = messageEventOf(handshake, authorizer, bufferOf(data), isBinary);
      // Not awaited: the next message must not wait for this one (no per-connection ordering).
      void track(invoke(event)).catch((error: unknown) =>
        log('$default failed', { connectionId: handshake.connectionId, messageId: event.requestContext.messageId, error: String(error) }),
      );
    });
    ws.on('ping', () => {
      connection.lastActiveAt = Date.now();
      idleTimer.refresh();
    });
    // `ws` reports a message over maxPayload as an error and closes with 1009 itself.
    ws.on('error', () => undefined);
    ws.once('close', (code: number, reason: Buffer) => {
      clearTimeout(idleTimer);
      clearTimeout(lifetimeTimer);
      // Gone before $disconnect runs: a post from the $disconnect handler answers 410, as in the cloud.
      connections.remove(handshake.connectionId);
      void disconnect(handshake, authorizer, code, reason.toString('utf8'));
    });
  };

  const handshake = async (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> => {
    // A client may reset the TCP connection while the authorizer and $connect run.
    const ignoreSocketError = () => undefined;
    socket.on('error', ignoreSocketError);
    const connectionId = mintConnectionId();
    const shake = handshakeOf(request, url, connectionId, Date.now());

    let authorizer: RelayAuthorizerContext | undefined;
    if (options.authorizer !== undefined) {
      const verdict = await runAuthorizer(options.authorizer, authorizerEventOf(shake, region));
      if (!verdict.allowed) {
        refuseHandshake(socket, verdict.statusCode, JSON.stringify({ message: verdict.message }));
        return;
      }
      authorizer = verdict.authorizer;
    }

    let result: WebSocketRouteResult | undefined;
    try {
      result = await track(invoke(connectEventOf(shake, authorizer)));
    } catch (error) {
      log('$connect failed', { connectionId, error: String(error) });
      refuseHandshake(socket, 500, JSON.stringify({ message: 'Internal server error' }));
      return;
    }
    const statusCode = result?.statusCode ?? 200;
    if (statusCode < 200 || statusCode > 299) {
      refuseHandshake(socket, statusCode, result?.body ?? '', retryAfterOf(result));
      return;
    }
    if (closing || socket.destroyed || !socket.readable || !socket.writable) {
      // $connect accepted a connection that is already gone: its state still needs the $disconnect.
      socket.destroy();
      void disconnect(shake, authorizer, 1006, 'Connection closed before the handshake completed');
      return;
    }
    const protocol = headerOf(result, 'sec-websocket-protocol');
    if (protocol !== undefined) chosenProtocols.set(request, protocol);
    socket.removeListener('error', ignoreSocketError);
    upgrading.set(request, { shake, authorizer });
    server.handleUpgrade(request, socket, head, (ws) => open(socket, ws, shake, authorizer));
  };

  return {
    connections,
    upgrade(request, socket, head, url) {
      if (closing) {
        refuseHandshake(socket, 503, JSON.stringify({ message: 'Service Unavailable' }));
        return;
      }
      // Checked before the authorizer and $connect run, as API Gateway does: a handshake the
      // upgrade would refuse must not take a connection slot its $disconnect never returns.
      if (handshakeProblem(request) !== undefined) {
        refuseHandshake(socket, 400, JSON.stringify({ message: 'Bad Request' }));
        return;
      }
      void track(handshake(request, socket, head, url)).catch((error: unknown) => {
        log('handshake failed', { error: String(error) });
        refuseHandshake(socket, 500, JSON.stringify({ message: 'Internal server error' }));
      });
    },
    async close() {
      closing = true;
      for (const connection of connections.all()) connection.socket.close(GOING_AWAY, 'Going away');
      // A client that never answers the close frame is cut after a short grace period.
      const deadline = Date.now() + 2_000;
      while (connections.size > 0 && Date.now() < deadline) await sleep(10);
      for (const connection of connections.all()) connection.socket.terminate();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      server.close();
    },
  };
}

/** Answers the upgrade request with a plain HTTP error and closes the socket, as API Gateway refuses a handshake. */
function refuseHandshake(socket: Duplex, statusCode: number, body: string, retryAfter?: string): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const payload = Buffer.from(body, 'utf8');
  const head = [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json',
    ...(retryAfter === undefined ? [] : [`Retry-After: ${retryAfter}`]),
    `Content-Length: ${payload.length}`,
    '',
    '',
  ].join('\r\n');
  socket.once('finish', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
}

/** A refusal's Retry-After, as `$connect` returned it (forwarding it is unverified on AWS: docs/operations.md, "Overload"). */
function retryAfterOf(result: WebSocketRouteResult | undefined): string | undefined {
  return headerOf(result, 'retry-after');
}

/** A header of a route result, by case-insensitive name (the relay's result type declares none, a Lambda proxy result may carry them). */
function headerOf(result: WebSocketRouteResult | undefined, name: string): string | undefined {
  const headers: Record<string, unknown> = result?.headers ?? {};
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  return typeof entry?.[1] === 'string' ? entry[1] : undefined;
}

function bufferOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Whether a `$default` event carries a `hello` frame (for the cold-start stand-in delay). */
function isHelloFrame(event: WebSocketRouteEvent): boolean {
  if (event.requestContext.routeKey !== '$default' || event.isBase64Encoded === true || event.body === undefined) return false;
  try {
    const frame: unknown = JSON.parse(event.body);
    return typeof frame === 'object' && frame !== null && (frame as { type?: unknown }).type === 'hello';
  } catch {
    return false;
  }
}
