/**
 * A local gateway started in-process with inline fake handlers, for testing the WebSocket API
 * and the `@connections` endpoint on their own (no DynamoDB, no relay handlers).
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import { createConnectionsApi } from '../../local/gateway/connections-api.ts';
import type { ConnectionsApiOptions } from '../../local/gateway/connections-api.ts';
import { startManagementListener } from '../../local/gateway/management-listener.ts';
import type { ManagementListener } from '../../local/gateway/management-listener.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { startGateway } from '../../local/gateway/server.ts';
import type { LocalGateway } from '../../local/gateway/server.ts';
import { createWebSocketApi } from '../../local/gateway/websocket-api.ts';
import type { WebSocketApi, WebSocketApiOptions } from '../../local/gateway/websocket-api.ts';

export interface FakeGateway {
  baseUrl: string;
  socketUrl: string;
  /** The loopback `@connections` listener; it takes requests signed with LOCAL_CREDENTIALS' key id. */
  management: ManagementListener;
  gateway: LocalGateway;
  api: WebSocketApi;
  /** Every route event the fake route handler received, in invocation order. */
  events: WebSocketRouteEvent[];
  /** Resolves with the first received event (past or future) matching `predicate`. */
  waitForEvent(predicate: (event: WebSocketRouteEvent) => boolean, timeoutMs?: number): Promise<WebSocketRouteEvent>;
  stop(): Promise<void>;
}

export interface FakeGatewayOptions extends Omit<Partial<WebSocketApiOptions>, 'route'> {
  /** The route handler's behaviour; every event is recorded before it runs. Default: 200. */
  route?: (event: WebSocketRouteEvent) => Promise<WebSocketRouteResult | undefined>;
  connections?: Omit<ConnectionsApiOptions, 'connections'>;
}

export async function startFakeGateway(options: FakeGatewayOptions = {}): Promise<FakeGateway> {
  const gateway = await startGateway({}, 0);
  const events: WebSocketRouteEvent[] = [];
  const waiters: Array<{ predicate: (event: WebSocketRouteEvent) => boolean; resolve: (event: WebSocketRouteEvent) => void }> = [];
  const { route, connections, ...apiOptions } = options;
  const api = createWebSocketApi({
    log: () => undefined,
    ...apiOptions,
    route: async (event) => {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
      return route === undefined ? { statusCode: 200 } : route(event);
    },
  });
  gateway.routes.upgrade = api.upgrade;
  const management = await startManagementListener({ accessKeyId: LOCAL_CREDENTIALS.accessKeyId });
  management.connections = createConnectionsApi({ connections: api.connections, ...connections });
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  return {
    baseUrl,
    socketUrl: `ws://127.0.0.1:${gateway.port}/socket`,
    gateway,
    management,
    api,
    events,
    waitForEvent(predicate, timeoutMs = 5_000) {
      const existing = events.find(predicate);
      if (existing !== undefined) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching route event')), timeoutMs);
        waiters.push({
          predicate,
          resolve: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
        });
      });
    },
    async stop() {
      gateway.stopAccepting();
      await api.close();
      await gateway.close();
      await management.close();
    },
  };
}

/** Opens a WebSocket, resolving once open or with the refused handshake's status. */
export async function connect(url: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket } | { refused: number }> {
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket }));
    socket.once('unexpected-response', (_request, response) => {
      resolve({ refused: response.statusCode ?? 0 });
      socket.terminate();
    });
    socket.once('error', reject);
  });
}

/** Opens a WebSocket that must be accepted. */
export async function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const result = await connect(url, headers);
  if ('refused' in result) throw new Error(`handshake refused with ${result.refused}`);
  return result.socket;
}

/** Resolves with the close code and reason once the socket closes. */
export async function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  if (socket.readyState === WebSocket.CLOSED) throw new Error('already closed');
  const [code, reason] = (await once(socket, 'close')) as [number, Buffer];
  return { code, reason: reason.toString() };
}
