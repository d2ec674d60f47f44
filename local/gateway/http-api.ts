/**
 * The HTTP API part of the local API Gateway: turns a Node request into an API Gateway HTTP
 * API (payload format 2.0) event, invokes the handler, and writes its structured result.
 * Like API Gateway it lowercases header names, joins repeated headers with commas, base64s
 * bodies that are not text, and refuses bodies over its 10 MB payload limit with 413.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { lambdaContext } from '../lambda-context.ts';
import { isPreflight, preflightHeaders, withCorsHeaders } from './cors.ts';
import type { CorsConfiguration } from './cors.ts';

export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway HTTP APIs refuse payloads over 10 MB. */
export const HTTP_API_PAYLOAD_LIMIT = 10 * 1024 * 1024;

const TEXT_TYPES = /^(text\/|application\/(json|x-ndjson|x-www-form-urlencoded|xml))/i;

export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

export function queryOf(url: URL): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  let any = false;
  for (const [name, value] of url.searchParams) {
    query[name] = name in query ? `${query[name]},${value}` : value;
    any = true;
  }
  return any ? query : undefined;
}

export function httpApiEvent(request: IncomingMessage, url: URL, body: Buffer): APIGatewayProxyEventV2 {
  const headers = headersOf(request);
  const isText = TEXT_TYPES.test(headers['content-type'] ?? 'text/plain');
  const method = (request.method ?? 'GET').toUpperCase();
  const query = queryOf(url);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.startsWith('?') ? url.search.slice(1) : url.search,
    headers,
    ...(query === undefined ? {} : { queryStringParameters: query }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body.length === 0 ? {} : { body: isText ? body.toString('utf8') : body.toString('base64') }),
    isBase64Encoded: body.length > 0 && !isText,
  };
}

/** The HTTP API's CORS configuration, when the deployment allows origins (API Gateway answers preflights itself). */
export async function serveHttpApi(handler: HttpApiHandler, request: IncomingMessage, response: ServerResponse, url: URL, cors?: CorsConfiguration): Promise<void> {
  if (cors !== undefined && isPreflight(cors, request.method, request.headers)) {
    response.writeHead(204, preflightHeaders(cors, request.headers)).end();
    return;
  }
  const body = await readBody(request, HTTP_API_PAYLOAD_LIMIT);
  if (body === 'too-large') {
    response.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Request Entity Too Large' }));
    return;
  }
  let result: APIGatewayProxyStructuredResultV2;
  try {
    result = await handler(httpApiEvent(request, url, body), lambdaContext('aep-relay-http', 29_000));
  } catch {
    // API Gateway answers a failed integration with a bare 500.
    response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Internal Server Error' }));
    return;
  }
  const payload = result.body === undefined ? Buffer.alloc(0) : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
  const headers = { ...(result.headers as Record<string, string> | undefined), 'content-length': String(payload.length) };
  response.writeHead(result.statusCode ?? 200, cors === undefined ? headers : withCorsHeaders(cors, request.headers, headers));
  response.end(payload);
}
