/**
 * Lambda response streaming on a function URL: the Node.js runtime provides a global
 * `awslambda` (typed by `@types/aws-lambda`) with `streamifyResponse` and
 * `HttpResponseStream.from`, which writes the HTTP status and headers before the body. The
 * local stack installs an emulation of the same global (`local/lambda-streaming-global.ts`).
 * This adapter turns the function URL's event into the plain request the relay serves.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { StreamHttpRequest } from '../relay/sse/accept-stream.ts';

export function streamRequestOf(event: APIGatewayProxyEventV2): StreamHttpRequest {
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers: event.headers ?? {},
    query: event.queryStringParameters ?? {},
  };
}
