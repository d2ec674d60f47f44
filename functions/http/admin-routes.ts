/**
 * The admin routes under `/admin/` (tokens, control policy, and for the operator, tenants).
 * Bodies are JSON; the admin token is taken from the `Authorization` header only, never the
 * query string, so it does not end up in URLs and their logs.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { invalidAdminRequest } from '../../src/admin/admin-errors.ts';
import { requireAdmin, requireNotSelfLockout, requireOperator, targetTenant } from '../../src/admin/admin-access.ts';
import { adminServiceFor } from '../../src/admin/admin-service.ts';
import type { AdminService } from '../../src/admin/admin-service.ts';
import { issueRequestFromBody } from '../../src/admin/issue-request.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { notFound, RelayError, unauthenticated } from '../../src/errors/relay-error.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { authenticate } from '../../src/relay/authenticate.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';

type Response = APIGatewayProxyStructuredResultV2;

/** Header carrying how many WebSocket connections a revocation closed (a 204 has no body). */
export const CONNECTIONS_CLOSED_HEADER = 'aep-connections-closed';

export async function adminRoute(runtime: RelayRuntime, event: APIGatewayProxyEventV2): Promise<Response> {
  const principal = await authenticate(runtime.tenants, { authorization: event.headers?.authorization, allowQueryToken: false });
  if (principal === undefined) throw unauthenticated();
  requireAdmin(principal);
  const admin = adminServiceFor(runtime);
  const operator = runtime.config.operatorTenant;
  const method = event.requestContext.http.method.toUpperCase();
  const segments = pathSegments(event.rawPath);
  const tenantOf = (requested: string | undefined) => targetTenant(principal, operator, requested);
  const query = event.queryStringParameters?.tenant;
  const [collection, id, action, ...rest] = segments;
  if (rest.length > 0) throw notFound();

  if (collection === 'tokens' && id === undefined) {
    if (method === 'GET') return jsonResponse(200, { tokens: await admin.listTokens(tenantOf(query)) });
    if (method === 'POST') {
      const request = issueRequestFromBody(jsonBody(event));
      return jsonResponse(201, await admin.issueToken({ ...request, tenant: tenantOf(request.tenant ?? query) }));
    }
    throw methodNotAllowed(method, event.rawPath);
  }
  if (collection === 'tokens' && id !== undefined && action === undefined) {
    if (method !== 'DELETE') throw methodNotAllowed(method, event.rawPath);
    const revocation = await admin.revokeToken(tenantOf(query), id);
    return noContent(revocation.connectionsClosed === null ? {} : { [CONNECTIONS_CLOSED_HEADER]: String(revocation.connectionsClosed) });
  }
  if (collection === 'tokens' && id !== undefined && action === 'rotate') {
    if (method !== 'POST') throw methodNotAllowed(method, event.rawPath);
    return jsonResponse(201, await admin.rotateToken(tenantOf(query), id));
  }
  if (collection === 'policy' && id === undefined) {
    if (method === 'GET') return jsonResponse(200, await admin.getControlPolicy(tenantOf(query)));
    if (method === 'PUT') return jsonResponse(200, await admin.setControlPolicy(tenantOf(query), jsonBody(event)));
    throw methodNotAllowed(method, event.rawPath);
  }
  if (collection === 'tenants') return tenantRoute(principal, operator, admin, method, event, id, action);
  throw notFound();
}

async function tenantRoute(
  principal: Principal,
  operator: string,
  admin: AdminService,
  method: string,
  event: APIGatewayProxyEventV2,
  tenant: string | undefined,
  action: string | undefined,
): Promise<Response> {
  requireOperator(principal, operator);
  if (tenant === undefined) {
    if (method === 'GET') return jsonResponse(200, { tenants: await admin.listTenants() });
    if (method === 'POST') return jsonResponse(201, await admin.createTenant(tenantNameOf(jsonBody(event))));
    throw methodNotAllowed(method, event.rawPath);
  }
  if (action !== 'disable' && action !== 'enable') throw notFound();
  if (method !== 'POST') throw methodNotAllowed(method, event.rawPath);
  if (action === 'enable') return jsonResponse(200, await admin.enableTenant(tenant));
  requireNotSelfLockout(principal, tenant);
  return jsonResponse(200, await admin.disableTenant(tenant));
}

function pathSegments(path: string): string[] {
  try {
    return path.slice('/admin/'.length).split('/').filter((segment) => segment !== '').map(decodeURIComponent);
  } catch {
    throw notFound();
  }
}

function jsonBody(event: APIGatewayProxyEventV2): unknown {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (text.trim() === '') throw invalidAdminRequest('this route takes a JSON body');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidAdminRequest('the body is not JSON');
  }
}

function tenantNameOf(body: unknown): string {
  const tenant = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).tenant : undefined;
  if (typeof tenant !== 'string') throw invalidAdminRequest('the body is a JSON object { "tenant": "<id>" }');
  return tenant;
}

function noContent(headers: Record<string, string>): Response {
  return { statusCode: 204, headers: { 'cache-control': 'no-store', ...headers } };
}

function methodNotAllowed(method: string, path: string): RelayError {
  return new RelayError('method-not-allowed', 405, `${method} is not supported on ${path}`);
}
