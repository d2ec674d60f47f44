/**
 * `functions/http`: the HTTP API handler (API Gateway HTTP API, payload format 2.0) for
 * `POST /events`, `GET /events`, `GET /.well-known/aep` and `GET /healthz`.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { accessLog } from '../../src/middleware/access-log.ts';
import { authentication } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { decodeBody } from '../../src/middleware/decode-body.ts';
import { httpErrors } from '../../src/middleware/http-errors.ts';
import { originGuard } from '../../src/middleware/origin-guard.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { credentialsOf, route } from './routes.ts';

const logger = createLogger({ service: 'aep-relay-http' });

/** The HTTP handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, AuthenticatedContext>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .use(accessLog(logger))
    .use(httpErrors(logger))
    // Before anything that reads the body or a token: a request around the edge costs nothing.
    .use(originGuard(runtime.config.originSecrets))
    .use(decodeBody())
    .use(authentication({ authority: runtime, credentialsOf }))
    .handler(async (event, context) => route(runtime, event, context));
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-http', namespace: config.metricsNamespace }) }));
