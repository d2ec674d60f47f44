/**
 * Decodes a body API Gateway handed over base64-encoded (binary media types, or any body a
 * function URL receives with a content type it does not treat as text), so every route reads
 * `event.body` as UTF-8 text and never decodes it itself.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export function decodeBody(): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    before: async (request) => {
      const { event } = request;
      if (!event.isBase64Encoded || event.body === undefined) return;
      event.body = Buffer.from(event.body, 'base64').toString('utf8');
      event.isBase64Encoded = false;
    },
  };
}
