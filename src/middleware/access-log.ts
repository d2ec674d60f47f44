/**
 * One access-log line per HTTP request: method, path without its query string (which may
 * carry `access_token`), status, duration and request id. Headers are never logged.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Logger } from '../observability/logger.ts';

export function accessLog(logger: Logger): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const startedAt = new WeakMap<object, number>();
  const write = (request: { event: APIGatewayProxyEventV2; response: APIGatewayProxyStructuredResultV2 | undefined | null; context: { awsRequestId: string } }) => {
    const began = startedAt.get(request.event) ?? Date.now();
    logger.info('request', {
      method: request.event.requestContext?.http?.method,
      path: request.event.rawPath,
      status: request.response?.statusCode,
      durationMs: Date.now() - began,
      requestId: request.context.awsRequestId,
    });
  };
  return {
    before: async (request) => {
      startedAt.set(request.event, Date.now());
    },
    after: async (request) => write(request),
    onError: async (request) => {
      // Runs after httpErrors (registered later, so its onError runs first) has set the response.
      if (request.response !== undefined) write(request);
    },
  };
}
