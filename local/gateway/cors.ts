/**
 * The CORS handling API Gateway (HTTP API `CorsConfiguration`) and a Lambda function URL
 * (`Cors`) do for the relay when the deployment allows origins: both answer a preflight
 * themselves, without invoking the function, and put their configured headers on every
 * response, ignoring CORS headers the function returned ("Configure CORS for HTTP APIs";
 * Lambda Developer Guide, "Cross-origin resource sharing (CORS)"). Without allowed origins
 * nothing is added and OPTIONS reaches the function like any method.
 */
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../infra/constructs/cors-rules.ts';

export interface CorsConfiguration {
  allowOrigins: readonly string[];
  allowMethods: readonly string[];
}

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** True when the request is a CORS preflight the gateway answers itself. */
export function isPreflight(cors: CorsConfiguration, method: string | undefined, headers: RequestHeaders): boolean {
  return cors.allowOrigins.length > 0 && method === 'OPTIONS' && typeof headers.origin === 'string' && typeof headers['access-control-request-method'] === 'string';
}

/** The preflight answer: 204, with the allowances only when the origin is allowed. */
export function preflightHeaders(cors: CorsConfiguration, headers: RequestHeaders): Record<string, string> {
  const origin = allowedOrigin(cors, headers);
  if (origin === undefined) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': cors.allowMethods.join(','),
    'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(','),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    ...(origin === '*' ? {} : { vary: 'origin' }),
  };
}

/** A response's headers with the function's own CORS headers dropped and the configured ones added for an allowed origin. */
export function withCorsHeaders(cors: CorsConfiguration, requestHeaders: RequestHeaders, responseHeaders: Readonly<Record<string, string>>): Record<string, string> {
  if (cors.allowOrigins.length === 0) return { ...responseHeaders };
  const kept = Object.fromEntries(Object.entries(responseHeaders).filter(([name]) => !name.toLowerCase().startsWith('access-control-')));
  const origin = allowedOrigin(cors, requestHeaders);
  if (origin === undefined) return kept;
  return {
    ...kept,
    'access-control-allow-origin': origin,
    'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(','),
    ...(origin === '*' ? {} : { vary: 'origin' }),
  };
}

function allowedOrigin(cors: CorsConfiguration, headers: RequestHeaders): string | undefined {
  const origin = headers.origin;
  if (typeof origin !== 'string') return undefined;
  if (cors.allowOrigins.includes('*')) return '*';
  return cors.allowOrigins.includes(origin) ? origin : undefined;
}
