/**
 * Refuses an HTTP request that did not come through the relay's edge (403, before
 * authentication, so it costs no token read): the HTTP API's own `execute-api` URL is public,
 * and a caller who uses it would go around CloudFront and any web ACL on it (src/auth/origin-verify.ts).
 * With no secret configured (a handler run without an edge, in tests) every request passes.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { carriesOriginSecret } from '../auth/origin-verify.ts';
import { forbidden } from '../errors/relay-error.ts';

/** What a request that went around the edge is told. */
export const EDGE_ONLY_DETAIL = "this endpoint answers only requests sent through the relay's public URL";

export function originGuard(secrets: readonly string[]): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    before: async (request) => {
      if (secrets.length > 0 && !carriesOriginSecret(request.event.headers, secrets)) throw forbidden(EDGE_ONLY_DETAIL);
    },
  };
}
