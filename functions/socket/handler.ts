/**
 * `functions/socket`: the WebSocket API integration for `$connect`, `$default` and
 * `$disconnect` (AEP-0003 §3.5). Authentication happened in the `$connect` authorizer; its
 * context identifies the tenant and token on every route.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { routeSocketEvent } from './route.ts';

const logger = createLogger({ service: 'aep-relay-socket' });

/** The socket handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  // A second before the function's timeout, so a frame that is still running can end its connection (below).
  return middy<WebSocketRouteEvent, WebSocketRouteResult, Error, Context>({ timeoutEarlyInMillis: 1_000 })
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .use({
      onError: async (request) => {
        // The stack counts this exact message (infra/constructs/observability.ts, SocketRouteFailures).
        const { routeKey, connectionId } = request.event.requestContext;
        logger.error('socket route failed', { error: request.error, routeKey, connectionId });
        // A frame that got neither its answer nor its refusal (the function ran out of time on a
        // starved machine): its connection is closed, never left in silence, and the client
        // resends what it did not hear about (AEP-0003 §3).
        if (routeKey === '$default') await runtime.poster.close(connectionId).catch(() => undefined);
        request.response = { statusCode: 500 };
      },
    })
    .handler((event, context) => routeSocketEvent(runtime, logger, event, context.awsRequestId));
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-socket', namespace: config.metricsNamespace }) }));
