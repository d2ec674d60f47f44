/**
 * Maps what a handler threw to an HTTP response: a RelayError becomes its status and JSON
 * body; anything else a bare 500 that reveals nothing (the cause goes to the log only).
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { httpRefusalOf, RelayError } from '../errors/relay-error.ts';
import type { Logger } from '../observability/logger.ts';
import { jsonResponse } from './json-response.ts';

export function httpErrors(logger: Logger): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = request.error;
      const answer = httpRefusalOf(error);
      if (answer.unexpected || answer.status >= 500) {
        // Storage still throttled or failing after the SDK's retries is a 503 the client retries; anything else a bare 500.
        logger.error(error instanceof RelayError ? 'request failed' : answer.status === 503 ? 'storage unavailable' : 'unhandled error', { error, requestId: request.context.awsRequestId });
      }
      request.response = jsonResponse(answer.status, answer.body, answer.headers);
    },
  };
}
