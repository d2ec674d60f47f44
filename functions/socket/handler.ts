/**
 * `functions/socket`: the WebSocket API integration for `$connect`, `$default` and
 * `$disconnect` (AEP-0003 §3.5). Authentication happened in the `$connect` authorizer; its
 * context identifies the tenant and token on every route.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRuntime } from '../../src/relay/runtime.ts';
import { dispatchMessage } from '../../src/relay/socket/dispatch.ts';
import { principalFromAuthorizer } from '../../src/relay/socket/principal-from-authorizer.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../../src/relay/tenant-quotas.ts';

const runtime = createRuntime(readRelayConfig(process.env));
const logger = createLogger({ service: 'aep-relay-socket' });

async function route(event: WebSocketRouteEvent, context: Context): Promise<WebSocketRouteResult> {
  const { routeKey, connectionId, requestTimeEpoch } = event.requestContext;
  const principal = principalFromAuthorizer(event.requestContext.authorizer);
  if (principal === undefined) {
    // Only reachable if the route were deployed without the authorizer: refuse, never open anonymously.
    logger.warn('route without authorizer context', { routeKey, connectionId });
    return { statusCode: 401 };
  }
  const log = logger.child({ tenant: principal.tenant, connectionId, requestId: context.awsRequestId });
  switch (routeKey) {
    case '$connect': {
      const quotas = await runtime.quotas.quotasOf(principal.tenant);
      if (!(await runtime.quotas.acquireConnection(principal.tenant, quotas.maxConnections ?? DEFAULT_MAX_CONNECTIONS))) {
        // No frame can be sent before the socket opens, so the quota refusal is the handshake's status.
        log.warn('connection refused', { reason: 'limit-exceeded' });
        return { statusCode: 429 };
      }
      await runtime.connections.createConnection(principal.tenant, connectionId, principal);
      log.info('connected');
      return { statusCode: 200 };
    }
    case '$disconnect':
      await runtime.connections.removeConnection(principal.tenant, connectionId);
      log.info('disconnected', { code: event.requestContext.disconnectStatusCode });
      return { statusCode: 200 };
    default: {
      const isBinary = event.isBase64Encoded;
      await dispatchMessage({ runtime, logger: log, principal, connectionId, receivedAtMs: requestTimeEpoch }, event.body ?? '', isBinary);
      return { statusCode: 200 };
    }
  }
}

export const handler = middy<WebSocketRouteEvent, WebSocketRouteResult, Error, Context>()
  .use({
    onError: async (request) => {
      logger.error('socket route failed', { error: request.error, routeKey: request.event.requestContext.routeKey, connectionId: request.event.requestContext.connectionId });
      request.response = { statusCode: 500 };
    },
  })
  .handler(route);
