/**
 * Maps what a handler threw to an HTTP response: a RelayError becomes its status and JSON
 * body; anything else a bare 500 that reveals nothing (the cause goes to the log only).
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { isStorageUnavailable, RelayError, unavailable } from '../errors/relay-error.ts';
import type { Logger } from '../observability/logger.ts';
import { jsonResponse } from './json-response.ts';

export function httpErrors(logger: Logger): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = request.error;
      if (error instanceof RelayError) {
        if (error.status >= 500) logger.error('request failed', { code: error.code, cause: error.cause, requestId: request.context.awsRequestId });
        request.response = jsonResponse(error.status, error.body(), error.headers());
        return;
      }
      if (isStorageUnavailable(error)) {
        // Storage still throttled or failing after the SDK's retries: the client retries later.
        logger.error('storage unavailable', { error, requestId: request.context.awsRequestId });
        const refusal = unavailable();
        request.response = jsonResponse(503, refusal.body(), refusal.headers());
        return;
      }
      logger.error('unhandled error', { error, requestId: request.context.awsRequestId });
      request.response = jsonResponse(500, { error: 'internal', detail: 'internal error' });
    },
  };
}
