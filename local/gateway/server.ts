/**
 * The local API Gateway: one HTTP port serving what the cloud splits across an HTTP API, a
 * WebSocket API, a streaming function URL and the WebSocket management endpoint. With an edge
 * (the local stack always has one) every viewer request first goes through the local
 * CloudFront (`edge.ts`), which picks the origin and runs the deployed viewer-request
 * functions. The `@connections` management endpoint is not served here: the public port answers
 * 404 for it, and the stack serves it on a loopback listener of its own that only the stack's
 * management credentials may use (management-listener.ts), as API Gateway requires IAM for it.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EdgeOrigin } from '../../infra/constructs/edge-behaviours.ts';
import type { CloudFrontResponse } from './cloudfront-function.ts';
import type { CorsConfiguration } from './cors.ts';
import type { LocalEdge } from './edge.ts';
import { isConsolePath } from './console-files.ts';
import { serveHttpApi } from './http-api.ts';
import { MANAGEMENT_PATH_PREFIX } from './management-listener.ts';
import type { HttpApiHandler } from './http-api.ts';

/**
 * What the gateway serves. Every route may be set after the gateway listens: the stack loads
 * the handlers only once the ports are known, and until then the HTTP routes answer 503.
 */
export interface GatewayRoutes {
  http?: HttpApiHandler;
  /** `GET /stream` (response streaming), when served. */
  stream?: (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;
  /** WebSocket upgrade: what the edge sends to the WebSocket origin, or `/socket` without an edge. */
  upgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void;
  /** The CloudFront in front of the origins, when emulated. */
  edge?: LocalEdge;
  /** The HTTP API's CORS configuration, when the deployment allows origins. */
  httpCors?: CorsConfiguration;
  /** The console's built files at `/console/` (the S3 origin when deployed), when served. */
  console?: (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;
}

export interface LocalGateway {
  server: Server;
  port: number;
  /** The live route table; assigning a route takes effect for the next request. */
  routes: GatewayRoutes;
  /** Stops accepting connections; open ones (WebSockets, SSE) stay until `close()`. */
  stopAccepting(): void;
  /** Stops accepting, cuts every remaining connection, and resolves once the server is closed. */
  close(): Promise<void>;
}

/** The port asked for is held by another process (another stack, most likely). */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`${host}:${port} is already in use`);
  }
}

/** The request's URL, or undefined when its `Host` or target makes none (never a throw: one bad request must not stop the gateway). */
function targetOf(request: IncomingMessage): URL | undefined {
  try {
    return new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  } catch {
    return undefined;
  }
}

/** How long a request's headers (a WebSocket upgrade's whole handshake request) may take to arrive. */
export const HANDSHAKE_BOUND_MS = 10_000;
/** How long a whole request, body included, may take to arrive. */
export const REQUEST_BOUND_MS = 30_000;

export async function startGateway(routes: GatewayRoutes, port: number, host = '127.0.0.1'): Promise<LocalGateway> {
  // The timeouts are checked every second (Node's default, 30 s, would let a slow handshake
  // outlive its bound by that much).
  const server = createServer({ connectionsCheckingInterval: 1_000 }, (request, response) => {
    const url = targetOf(request);
    if (url === undefined) {
      // A `Host` or target no URL can be made of (`a b`, `%`, `[::`, `GET http://[/`): refused, and the gateway serves on.
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Bad Request' }));
      return;
    }
    const served = dispatch(routes, request, response, url);
    served.catch(() => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error' }));
    });
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = targetOf(request);
    if (url === undefined) {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const routed = originOf(routes, request, url);
    if ('response' in routed) {
      socket.end(`HTTP/1.1 ${routed.response.statusCode} ${routed.response.statusDescription ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    if (routed.origin === 'socket' && routes.upgrade !== undefined) {
      routes.upgrade(request, socket, head, routed.url);
      return;
    }
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
  });
  // A request (an upgrade's included) must arrive whole within these bounds, so a client that
  // sends its headers or body slowly (slowloris) holds nothing past them: 408 and closed. They
  // bound receiving the request only: long-lived SSE responses and upgraded WebSockets are not cut.
  server.headersTimeout = HANDSHAKE_BOUND_MS;
  server.requestTimeout = REQUEST_BOUND_MS;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error));
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  let closed: Promise<void> | undefined;
  const stopAccepting = () => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    server,
    port: boundPort,
    routes,
    stopAccepting,
    close: async () => {
      stopAccepting();
      server.closeAllConnections();
      await closed;
    },
  };
}

function dispatch(routes: GatewayRoutes, request: IncomingMessage, response: ServerResponse, viewerUrl: URL): Promise<void> {
  // The management API lives on the loopback management listener only.
  if (viewerUrl.pathname.startsWith(MANAGEMENT_PATH_PREFIX)) {
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
    return Promise.resolve();
  }
  if (isConsolePath(viewerUrl.pathname) && routes.console !== undefined) return routes.console(request, response, viewerUrl);
  const routed = originOf(routes, request, viewerUrl);
  if ('response' in routed) {
    response.writeHead(routed.response.statusCode).end();
    return Promise.resolve();
  }
  const { origin, url } = routed;
  if (origin === 'stream' && routes.stream !== undefined) return routes.stream(request, response, url);
  if (origin === 'socket') {
    // The WebSocket API serves upgrades only.
    response.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' }).end(JSON.stringify({ message: 'Upgrade Required' }));
    return Promise.resolve();
  }
  if (routes.http === undefined) {
    response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Service Unavailable' }));
    return Promise.resolve();
  }
  return serveHttpApi(routes.http, request, response, url, routes.httpCors);
}

/** Which origin serves a request: the edge's decision, or without an edge the plain path routes. */
function originOf(routes: GatewayRoutes, request: IncomingMessage, url: URL): { origin: EdgeOrigin; url: URL } | { response: CloudFrontResponse } {
  if (routes.edge !== undefined) return routes.edge.route(request, url);
  if (url.pathname === '/stream') return { origin: 'stream', url };
  if (url.pathname === '/socket') return { origin: 'socket', url };
  return { origin: 'http', url };
}
