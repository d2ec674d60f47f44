/**
 * The local API Gateway: one HTTP port serving what the cloud splits across an HTTP API, a
 * WebSocket API, a streaming function URL and the WebSocket management endpoint.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { serveHttpApi } from './http-api.ts';
import type { HttpApiHandler } from './http-api.ts';

/**
 * What the gateway serves. Every route may be set after the gateway listens: the stack loads
 * the handlers only once the port (and so the `@connections` endpoint) is known, and until then
 * the HTTP routes answer 503.
 */
export interface GatewayRoutes {
  http?: HttpApiHandler;
  /** `GET /stream` (response streaming), when served. */
  stream?: (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;
  /** `/@connections/{id}` management API, when served. */
  connections?: (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;
  /** WebSocket upgrade on `/socket`, when served. */
  upgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void;
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

export async function startGateway(routes: GatewayRoutes, port: number, host = '127.0.0.1'): Promise<LocalGateway> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
    const served = dispatch(routes, request, response, url);
    served.catch(() => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error' }));
    });
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
    if (url.pathname === '/socket' && routes.upgrade !== undefined) {
      routes.upgrade(request, socket, head, url);
      return;
    }
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
  });
  // Long-lived SSE and WebSocket connections must not be cut by Node's default timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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

function dispatch(routes: GatewayRoutes, request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
  if (url.pathname === '/stream' && routes.stream !== undefined) return routes.stream(request, response, url);
  if (url.pathname.startsWith('/@connections/') && routes.connections !== undefined) return routes.connections(request, response, url);
  if (routes.http === undefined) {
    response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Service Unavailable' }));
    return Promise.resolve();
  }
  return serveHttpApi(routes.http, request, response, url);
}
