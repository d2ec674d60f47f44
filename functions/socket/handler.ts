/**
 * `functions/socket`: the WebSocket API integration for `$connect`, `$default` and
 * `$disconnect` (AEP-0003 §3.5). Authentication happened in the `$connect` authorizer; its
 * context identifies the tenant and token on every route.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { principalFromAuthorizer } from '../../src/gateway/principal-from-authorizer.ts';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { dispatchMessage } from '../../src/relay/socket/dispatch.ts';
import { openConnection } from '../../src/relay/connection-deadline.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-socket' });

async function route(runtime: RelayRuntime, event: WebSocketRouteEvent, context: Context): Promise<WebSocketRouteResult> {
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
      // No frame can be sent before the socket opens, so a refusal is the handshake's status.
      const outcome = await openConnection(runtime, principal, connectionId);
      if (outcome !== 'open') {
        log.warn('connection refused', { reason: outcome });
        return { statusCode: outcome === 'limit-exceeded' ? 429 : 401 };
      }
      log.info('connected');
      return { statusCode: 200 };
    }
    case '$disconnect':
      await runtime.connections.removeConnection(principal.tenant, connectionId);
      runtime.frameBudgets.forget(connectionId);
      // Counted here, not in removeConnection: fan-out also removes connections it finds gone.
      runtime.metrics.count('SocketsClosed', principal.tenant);
      log.info('disconnected', { code: event.requestContext.disconnectStatusCode });
      return { statusCode: 200 };
    default: {
      const isBinary = event.isBase64Encoded;
      await dispatchMessage({ runtime, logger: log, principal, connectionId, receivedAtMs: requestTimeEpoch }, event.body ?? '', isBinary);
      return { statusCode: 200 };
    }
  }
}

/** The socket handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<WebSocketRouteEvent, WebSocketRouteResult, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .use({
      onError: async (request) => {
        // The stack counts this exact message (infra/constructs/observability.ts, SocketRouteFailures).
        logger.error('socket route failed', { error: request.error, routeKey: request.event.requestContext.routeKey, connectionId: request.event.requestContext.connectionId });
        request.response = { statusCode: 500 };
      },
    })
    .handler((event, context) => route(runtime, event, context));
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-socket', namespace: config.metricsNamespace }) }));
