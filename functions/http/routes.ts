/**
 * The HTTP API routes (AEP-0003 §3.2 emit, §3.4 discovery), the health probe, and the
 * admin routes under `/admin/` (`admin-routes.ts`).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { hasScope } from '../../src/auth/principal.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { badRequest, forbidden, limitExceeded, notFound, payloadTooLarge, unauthenticated, versionUnsupported } from '../../src/errors/relay-error.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { SUPPORTED_VERSIONS } from '../../src/protocol/event.ts';
import { authenticate } from '../../src/relay/authenticate.ts';
import { discoveryDocument } from '../../src/relay/discovery.ts';
import type { DiscoverySurface } from '../../src/relay/discovery.ts';
import { bodyKindOf, splitBody } from '../../src/relay/http-batch.ts';
import { admitBatch, appendAll } from '../../src/relay/ingest.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { RelayError } from '../../src/errors/relay-error.ts';
import { adminRoute } from './admin-routes.ts';

type Response = APIGatewayProxyStructuredResultV2;

export async function route(runtime: RelayRuntime, surface: DiscoverySurface, event: APIGatewayProxyEventV2): Promise<Response> {
  const method = event.requestContext.http.method.toUpperCase();
  const path = event.rawPath;
  if (path === '/healthz' && (method === 'GET' || method === 'HEAD')) return jsonResponse(200, { ok: true });
  if (path.startsWith('/admin/')) return adminRoute(runtime, event);
  const isEvents = path === '/events';
  if (!isEvents && path !== '/.well-known/aep') throw notFound();
  if (method === 'GET') {
    await requirePrincipal(runtime, event);
    return jsonResponse(200, discoveryDocument(surface));
  }
  if (isEvents && method === 'POST') return postEvents(runtime, event);
  throw new RelayError('method-not-allowed', 405, `${method} is not supported on ${path}`);
}

async function requirePrincipal(runtime: RelayRuntime, event: APIGatewayProxyEventV2): Promise<Principal> {
  // Only GET may carry the token in the query (AEP-0003 §8.1: for EventSource-style clients).
  const principal = await authenticate(runtime.tenants, {
    authorization: event.headers?.authorization,
    accessTokenQuery: event.queryStringParameters?.access_token,
    allowQueryToken: event.requestContext.http.method.toUpperCase() === 'GET',
  });
  if (principal === undefined) throw unauthenticated();
  return principal;
}

async function postEvents(runtime: RelayRuntime, event: APIGatewayProxyEventV2): Promise<Response> {
  const principal = await requirePrincipal(runtime, event);
  if (!hasScope(principal, 'emit')) throw forbidden('this token lacks the emit scope');
  const version = event.headers?.['aep-version']?.trim();
  if (version === undefined || !(SUPPORTED_VERSIONS as readonly string[]).includes(version)) throw versionUnsupported(SUPPORTED_VERSIONS);
  const kind = bodyKindOf(event.headers?.['content-type']);
  if (kind instanceof RelayError) throw kind;
  const { limits } = runtime.config;
  const body = decodeBody(event);
  const bodyBytes = Buffer.byteLength(body, 'utf8');
  if (bodyBytes > limits.maxBodyBytes) throw payloadTooLarge('payload-too-large', `the body is ${bodyBytes} bytes; the limit is ${limits.maxBodyBytes}`);
  if (body.trim() === '') throw badRequest('invalid-event', 'the body carries no event');
  const quotas = await runtime.quotas.quotasOf(principal.tenant);
  const texts = splitBody(body, kind, quotas.maxBatchEvents ?? limits.maxBatchEvents);
  if (texts instanceof RelayError) throw texts;
  const admitted = admitBatch(texts, principal, limits);
  if (quotas.eventsPerSecond !== undefined && !(await runtime.quotas.admitEvents(principal.tenant, admitted.length, quotas.eventsPerSecond))) {
    throw limitExceeded(`the tenant's quota is ${quotas.eventsPerSecond} events per second; retry later with the same event ids`);
  }
  const result = await appendAll(runtime.eventLog, principal.tenant, admitted);
  return jsonResponse(202, { accepted: admitted.length, stored: result.stored, duplicates: result.duplicates });
}

function decodeBody(event: APIGatewayProxyEventV2): string {
  const body = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
}
