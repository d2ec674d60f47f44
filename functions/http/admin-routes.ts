/**
 * The admin routes under `/admin/` (tokens, control policy, bridges, quotas, and for the
 * operator, tenants), as a route table. Each acting route hands the caller to the service,
 * which lets it affect only what it could have issued (`src/admin/attenuation.ts`). Bodies are JSON; the admin token is taken from the `Authorization` header
 * only, never the query string, so it does not end up in URLs and their logs.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { invalidAdminRequest } from '../../src/admin/admin-errors.ts';
import { requireAdmin, requireNotSelfLockout, requireOperator, requireQuotaSetter, targetTenant } from '../../src/admin/admin-access.ts';
import { requireTenantWideAdmin } from '../../src/admin/attenuation.ts';
import { ALREADY_REVOKED_HEADER, ALSO_REVOKED_HEADER, CONNECTIONS_CLOSED_HEADER, STREAMS_ENDED_HEADER } from '../../src/admin/admin-operations.ts';
import { adminServiceFor } from '../../src/admin/admin-service.ts';
import { BridgeAdmin } from '../../src/admin/bridge-admin.ts';
import type { AdminService } from '../../src/admin/admin-service.ts';
import { issueRequestFromBody } from '../../src/admin/issue-request.ts';
import { OperatorAdmin } from '../../src/admin/operator-admin.ts';
import { IdentityProviderAdmin } from '../../src/admin/identity-provider-admin.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { matchRoute } from './route-table.ts';
import type { Route } from './route-table.ts';

type Response = APIGatewayProxyStructuredResultV2;

/** Where admin changes of trusted operators are recorded: the function's structured log (CloudWatch Logs), one line per change. */
const adminAuditLog = createLogger({ service: 'aep-relay-admin-audit' });

/** What an admin route works with: the caller, the service, and the request's parts. */
interface AdminRequest {
  principal: Principal;
  admin: AdminService;
  bridges: BridgeAdmin;
  /** The operators the tenant trusts to sign identity cards (AEP-0003 §8.3). */
  operators: OperatorAdmin;
  /** The tenant's OpenID Connect provider and role rules (team sign-in). */
  identityProviders: IdentityProviderAdmin;
  operatorTenant: string;
  params: Record<string, string>;
  /** The `tenant` query parameter: the operator names another tenant with it. */
  tenantQuery: string | undefined;
  /** The body parsed as JSON; refuses a missing or malformed body. */
  body: () => unknown;
}

type AdminHandler = (request: AdminRequest) => Promise<Response>;

/** The tenant a self-service route acts on: the caller's own, or the one the operator names. */
const tenantOf = (request: AdminRequest, named?: string) => targetTenant(request.principal, request.operatorTenant, named ?? request.tenantQuery);

/** Tenant lifecycle is the operator's alone. */
const operatorOnly = (handler: AdminHandler): AdminHandler => async (request) => {
  requireOperator(request.principal, request.operatorTenant);
  return handler(request);
};

/** Creating, disabling and enabling tenants acts on every token of a tenant: a tenant-wide operator admin only. */
const operatorWide = (handler: AdminHandler): AdminHandler =>
  operatorOnly(async (request) => {
    requireTenantWideAdmin(request.principal, 'managing tenants');
    return handler(request);
  });

const ADMIN_ROUTES: readonly Route<AdminHandler>[] = [
  { method: 'GET', path: 'tokens', handler: async (request) => jsonResponse(200, { tokens: await request.admin.listTokens(tenantOf(request)) }) },
  {
    method: 'POST',
    path: 'tokens',
    handler: async (request) => {
      const issue = issueRequestFromBody(request.body());
      // The caller is the issuer: the grant is attenuated to it and recorded (`attenuation.ts`).
      return jsonResponse(201, await request.admin.issueToken({ ...issue, tenant: tenantOf(request, issue.tenant) }, { issuer: request.principal }));
    },
  },
  {
    method: 'DELETE',
    path: 'tokens/:tokenId',
    handler: async (request) => {
      const revocation = await request.admin.revokeToken(tenantOf(request), request.params.tokenId as string, { actor: request.principal });
      return noContent({
        ...(revocation.connectionsClosed === null ? {} : { [CONNECTIONS_CLOSED_HEADER]: String(revocation.connectionsClosed) }),
        [STREAMS_ENDED_HEADER]: String(revocation.streamsEnded),
        ...(revocation.alsoRevoked.length === 0 ? {} : { [ALSO_REVOKED_HEADER]: revocation.alsoRevoked.join(',') }),
        // DELETE stays idempotent (204 either way); the header tells a client nothing changed.
        ...(revocation.alreadyRevoked ? { [ALREADY_REVOKED_HEADER]: 'true' } : {}),
      });
    },
  },
  { method: 'POST', path: 'tokens/:tokenId/rotate', handler: async (request) => jsonResponse(201, await request.admin.rotateToken(tenantOf(request), request.params.tokenId as string, { actor: request.principal })) },
  { method: 'GET', path: 'policy', handler: async (request) => jsonResponse(200, await request.admin.getControlPolicy(tenantOf(request))) },
  { method: 'PUT', path: 'policy', handler: async (request) => jsonResponse(200, await request.admin.setControlPolicy(tenantOf(request), request.body(), { actor: request.principal })) },
  { method: 'GET', path: 'quotas', handler: async (request) => jsonResponse(200, await request.admin.getQuotas(tenantOf(request))) },
  {
    method: 'PUT',
    path: 'quotas',
    handler: async (request) => {
      requireQuotaSetter(request.principal, request.operatorTenant);
      return jsonResponse(200, await request.admin.setQuotas(tenantOf(request), request.body()));
    },
  },
  { method: 'GET', path: 'bridges', handler: async (request) => jsonResponse(200, { sinks: await request.bridges.listSinks(tenantOf(request)) }) },
  { method: 'PUT', path: 'bridges', handler: async (request) => jsonResponse(200, await request.bridges.setSinks(tenantOf(request), request.body(), { actor: request.principal })) },
  {
    method: 'DELETE',
    path: 'bridges',
    handler: async (request) => {
      await request.bridges.clearSinks(tenantOf(request), { actor: request.principal });
      return noContent({});
    },
  },
  { method: 'GET', path: 'bridges/dead-letters', handler: async (request) => jsonResponse(200, { deadLetters: await request.bridges.listDeadLetters(tenantOf(request)) }) },
  // 202: the letters are scheduled; the sink-retry worker sends them (poll the listing).
  { method: 'POST', path: 'bridges/dead-letters/redrive', handler: async (request) => jsonResponse(202, await request.bridges.redrive(tenantOf(request), { actor: request.principal })) },
  { method: 'GET', path: 'operators', handler: async (request) => jsonResponse(200, { operators: await request.operators.listOperators(tenantOf(request)) }) },
  { method: 'PUT', path: 'operators/:name', handler: async (request) => jsonResponse(200, await request.operators.putOperator(tenantOf(request), request.params.name as string, request.body(), { actor: request.principal })) },
  {
    method: 'DELETE',
    path: 'operators/:name',
    handler: async (request) => {
      await request.operators.removeOperator(tenantOf(request), request.params.name as string, { actor: request.principal });
      return noContent({});
    },
  },
  { method: 'GET', path: 'identity-provider', handler: async (request) => jsonResponse(200, await request.identityProviders.getIdentityProvider(tenantOf(request))) },
  { method: 'PUT', path: 'identity-provider', handler: async (request) => jsonResponse(200, await request.identityProviders.putIdentityProvider(tenantOf(request), request.body(), { actor: request.principal })) },
  {
    method: 'DELETE',
    path: 'identity-provider',
    handler: async (request) => {
      await request.identityProviders.removeIdentityProvider(tenantOf(request), { actor: request.principal });
      return noContent({});
    },
  },
  { method: 'GET', path: 'tenants', handler: operatorOnly(async (request) => jsonResponse(200, { tenants: await request.admin.listTenants() })) },
  { method: 'POST', path: 'tenants', handler: operatorWide(async (request) => jsonResponse(201, await request.admin.createTenant(tenantNameOf(request.body())))) },
  { method: 'POST', path: 'tenants/:tenant/enable', handler: operatorWide(async (request) => jsonResponse(200, await request.admin.enableTenant(request.params.tenant as string))) },
  {
    method: 'POST',
    path: 'tenants/:tenant/disable',
    handler: operatorWide(async (request) => {
      const tenant = request.params.tenant as string;
      requireNotSelfLockout(request.principal, tenant);
      return jsonResponse(200, await request.admin.disableTenant(tenant));
    }),
  },
];

/** Serves one `/admin/...` request of an authenticated principal. */
export async function adminRoute(runtime: RelayRuntime, principal: Principal, event: APIGatewayProxyEventV2): Promise<Response> {
  requireAdmin(principal);
  const method = event.requestContext.http.method.toUpperCase();
  const { handler, params } = matchRoute(ADMIN_ROUTES, method, event.rawPath.slice('/admin/'.length));
  return handler({
    principal,
    admin: adminServiceFor(runtime),
    bridges: new BridgeAdmin(runtime.bridges, runtime.tenants),
    operators: new OperatorAdmin({ ...runtime.identity, tenants: runtime.tenants, now: runtime.now, audit: (entry) => adminAuditLog.info('admin change', { audit: entry }) }),
    identityProviders: new IdentityProviderAdmin({
      providers: runtime.teamSignIn.providers,
      tenants: runtime.tenants,
      sealer: runtime.bridges.sealer,
      addresses: runtime.identity.addresses,
      now: runtime.now,
      audit: (entry) => adminAuditLog.info('admin change', { audit: entry }),
    }),
    operatorTenant: runtime.config.operatorTenant,
    params,
    tenantQuery: event.queryStringParameters?.tenant,
    body: () => jsonBodyOf(event.body ?? ''),
  });
}

function jsonBodyOf(text: string): unknown {
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
