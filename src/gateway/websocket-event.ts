/**
 * The event API Gateway WebSocket APIs hand a Lambda integration on `$connect`, `$default`
 * and `$disconnect` (proxy integration). The authorizer's context rides along on every route
 * of the connection, flattened into `requestContext.authorizer` (values are strings).
 */
import type { APIGatewayEventWebsocketRequestContextV2 } from 'aws-lambda';

/** What the relay's REQUEST authorizer puts in the context (all values strings, as API Gateway requires scalars). */
export interface RelayAuthorizerContext {
  principalId?: string;
  tenant?: string;
  tokenId?: string;
  /** Comma-separated scopes. */
  scopes?: string;
  /** JSON array of bound agent names, when the token is bound. */
  agents?: string;
  /** The token's expiry (epoch ms, decimal), when it has one. */
  expiresAt?: string;
  /** The token's capture ceiling, when it has one (`TokenGrant.maxCapture`). */
  maxCapture?: string;
  /** The token's rotation lineage, when it was rotated (`TokenGrant.lineage`). */
  lineage?: string;
  /** JSON `{ subject, name, provider }` of the signed-in person, for a team sign-in credential. */
  person?: string;
  /** The operator the token's identity cards must be from (`TokenGrant.operator`). */
  operator?: string;
  /**
   * Set (`'true'`) when the authorizer could not check the token in time (overload): it allows
   * the handshake through to `$connect`, which refuses it with 503 and Retry-After, the answer
   * an authorizer cannot give (it can only allow, deny with 403 or 401, or fail with 500).
   */
  overloaded?: string;
}

export interface WebSocketRequestContext extends APIGatewayEventWebsocketRequestContextV2 {
  authorizer?: RelayAuthorizerContext;
  identity?: { sourceIp: string; userAgent?: string };
  /** On `$disconnect`: the close code and reason, when API Gateway knows them. */
  disconnectStatusCode?: number;
  disconnectReason?: string;
}

export interface WebSocketRouteEvent {
  requestContext: WebSocketRequestContext;
  /** On `$connect` only: the handshake headers. */
  headers?: Record<string, string | undefined>;
  multiValueHeaders?: Record<string, string[] | undefined>;
  /** On `$connect` only: the handshake query string. */
  queryStringParameters?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded: boolean;
}

/** What a route integration returns; only the status matters to `$connect` (non-2xx refuses the handshake). */
export interface WebSocketRouteResult {
  statusCode: number;
  body?: string;
  /** On `$connect` only: headers of the handshake's answer (a refusal's `Retry-After`). */
  headers?: Record<string, string>;
}
