/**
 * `functions/http`: the HTTP API handler (API Gateway HTTP API, payload format 2.0) for
 * `POST /events`, `GET /events`, `GET /.well-known/aep` and `GET /healthz`.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { accessLog } from '../../src/middleware/access-log.ts';
import { httpErrors } from '../../src/middleware/http-errors.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRuntime } from '../../src/relay/runtime.ts';
import { route } from './routes.ts';

const config = readRelayConfig(process.env);
const runtime = createRuntime(config);
const logger = createLogger({ service: 'aep-relay-http' });
const surface = { replayBuffer: config.replayBuffer, stream: config.surface.stream, socket: config.surface.socket, control: config.surface.socket, roster: config.surface.socket };

export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context>()
  .use(accessLog(logger))
  .use(httpErrors(logger))
  .handler(async (event) => route(runtime, surface, event));
