/**
 * The events the local WebSocket API hands its Lambda integrations, shaped like API
 * Gateway's: the REQUEST authorizer input on `$connect` ("Control access to WebSocket APIs
 * with AWS Lambda REQUEST authorizers") and the proxy-integration route events of
 * `src/gateway/websocket-event.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RelayAuthorizerContext, WebSocketRequestContext, WebSocketRouteEvent } from '../../src/gateway/websocket-event.ts';

/** The stage and API id the local WebSocket API reports (there is one of each). */
export const LOCAL_STAGE = 'local';
export const LOCAL_API_ID = 'local';
const LOCAL_ACCOUNT = '000000000000';

/**
 * An id in API Gateway's style (connection ids, request ids, message ids look like
 * `L0SM9cOFvHcCIhw=`): 11 random bytes, standard base64, so 16 characters ending in `=`.
 * The standard alphabet includes `+` and `/`, so clients and the management API must
 * URL-encode the id in a path, as they must in the cloud.
 */
export function mintApiGatewayId(): string {
  return randomBytes(11).toString('base64');
}

/** `19/Jan/2023:21:13:26 +0000`, the CLF-style `requestTime` API Gateway reports. */
export function requestTimeOf(epochMs: number): string {
  const date = new Date(epochMs);
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** What the handshake request carries into the `$connect` authorizer and route events. */
export interface Handshake {
  connectionId: string;
  connectedAt: number;
  /** Header names as the client sent them (API Gateway does not lowercase WebSocket handshake headers). */
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  queryStringParameters?: Record<string, string>;
  multiValueQueryStringParameters?: Record<string, string[]>;
  sourceIp: string;
  userAgent: string;
  domainName: string;
}

/** Reads the handshake request; repeated headers and query parameters keep their last value in the single-value maps. */
export function handshakeOf(request: IncomingMessage, url: URL, connectionId: string, connectedAt: number): Handshake {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] as string;
    const value = request.rawHeaders[index + 1] as string;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = {};
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiValueQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    connectionId,
    connectedAt,
    headers,
    multiValueHeaders,
    ...(hasQuery ? { queryStringParameters: query, multiValueQueryStringParameters: multiValueQuery } : {}),
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    userAgent: request.headers['user-agent'] ?? '',
    domainName: request.headers.host ?? 'localhost',
  };
}

/** `arn:aws:execute-api:{region}:{account}:{api-id}/{stage}/$connect`, the authorizer's `methodArn`. */
export function connectMethodArn(region: string): string {
  return `arn:aws:execute-api:${region}:${LOCAL_ACCOUNT}:${LOCAL_API_ID}/${LOCAL_STAGE}/$connect`;
}

/**
 * The REQUEST authorizer input for a WebSocket `$connect`, as in the API Gateway developer
 * guide's example. It has no `resource`, `path` or `httpMethod` (a WebSocket route has none),
 * which is why it is typed here rather than as the REST-shaped `APIGatewayRequestAuthorizerEvent`.
 */
export interface WebSocketAuthorizerEvent {
  type: 'REQUEST';
  methodArn: string;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
  stageVariables: Record<string, string>;
  requestContext: WebSocketRequestContext;
}

export function authorizerEventOf(handshake: Handshake, region: string): WebSocketAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: connectMethodArn(region),
    headers: handshake.headers,
    multiValueHeaders: handshake.multiValueHeaders,
    queryStringParameters: handshake.queryStringParameters ?? null,
    multiValueQueryStringParameters: handshake.multiValueQueryStringParameters ?? null,
    stageVariables: {},
    requestContext: requestContextOf(handshake, '$connect', 'CONNECT', undefined),
  };
}

/** The request context of one route invocation; every invocation gets fresh message and request ids. */
export function requestContextOf(
  handshake: Handshake,
  routeKey: '$connect' | '$default' | '$disconnect',
  eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT',
  authorizer: RelayAuthorizerContext | undefined,
): WebSocketRequestContext {
  const now = Date.now();
  const requestId = mintApiGatewayId();
  return {
    routeKey,
    eventType,
    messageId: mintApiGatewayId(),
    extendedRequestId: requestId,
    requestId,
    requestTime: requestTimeOf(now),
    requestTimeEpoch: now,
    messageDirection: 'IN',
    stage: LOCAL_STAGE,
    connectedAt: handshake.connectedAt,
    domainName: handshake.domainName,
    connectionId: handshake.connectionId,
    apiId: LOCAL_API_ID,
    identity: { sourceIp: handshake.sourceIp, userAgent: handshake.userAgent },
    ...(authorizer === undefined ? {} : { authorizer }),
  };
}

/** `$connect`: the handshake's headers and query string, with the authorizer's context. */
export function connectEventOf(handshake: Handshake, authorizer: RelayAuthorizerContext | undefined): WebSocketRouteEvent {
  return {
    requestContext: requestContextOf(handshake, '$connect', 'CONNECT', authorizer),
    headers: handshake.headers,
    multiValueHeaders: handshake.multiValueHeaders,
    ...(handshake.queryStringParameters === undefined ? {} : { queryStringParameters: handshake.queryStringParameters }),
    isBase64Encoded: false,
  };
}

/** `$default`: one received message; text frames arrive as text, binary ones as base64. */
export function messageEventOf(handshake: Handshake, authorizer: RelayAuthorizerContext | undefined, data: Buffer, isBinary: boolean): WebSocketRouteEvent {
  return {
    requestContext: requestContextOf(handshake, '$default', 'MESSAGE', authorizer),
    body: isBinary ? data.toString('base64') : data.toString('utf8'),
    isBase64Encoded: isBinary,
  };
}

/** `$disconnect`: the close code and reason, when known. */
export function disconnectEventOf(handshake: Handshake, authorizer: RelayAuthorizerContext | undefined, statusCode: number, reason: string): WebSocketRouteEvent {
  return {
    requestContext: {
      ...requestContextOf(handshake, '$disconnect', 'DISCONNECT', authorizer),
      disconnectStatusCode: statusCode,
      disconnectReason: reason,
    },
    isBase64Encoded: false,
  };
}
