/**
 * Team sign-in under `/signin/` (`src/auth/oidc/sign-in-service.ts`): the console's
 * authorization code flow (`provider`, `start`, `finish`), the CLI's device grant (`device`,
 * `device/poll`), and `signout`, which revokes the caller's own sign-in credential (its open
 * sockets and streams end as with any revocation). All but `signout` are served without a token:
 * they are how a person gets one. Credentials travel in JSON bodies only, never in a URL.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { adminServiceFor } from '../../src/admin/admin-service.ts';
import { invalidSignIn, noIdentityProvider } from '../../src/auth/oidc/sign-in-errors.ts';
import { SignInService } from '../../src/auth/oidc/sign-in-service.ts';
import { RelayError } from '../../src/errors/relay-error.ts';
import { requirePrincipal } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { isTenantId } from '../../src/relay/domain/tenant-id.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { matchRoute } from './route-table.ts';
import type { Route } from './route-table.ts';

type Response = APIGatewayProxyStructuredResultV2;

/** Sign-ins and sign-outs, one line each: who (subject, provider) and the token id, never a secret. */
const signInAuditLog = createLogger({ service: 'aep-relay-sign-in-audit' });

interface SignInRequest {
  runtime: RelayRuntime;
  service: SignInService;
  event: APIGatewayProxyEventV2;
  context: AuthenticatedContext;
  body: () => Record<string, unknown>;
}

type SignInHandler = (request: SignInRequest) => Promise<Response>;

const SIGN_IN_ROUTES: readonly Route<SignInHandler>[] = [
  { method: 'GET', path: 'provider', handler: async ({ service, event }) => jsonResponse(200, await service.provider(tenantOf(event.queryStringParameters?.tenant))) },
  {
    method: 'POST',
    path: 'start',
    handler: async ({ service, body }) => {
      const { tenant, redirectUri } = body();
      return jsonResponse(200, await service.startCodeFlow(tenantOf(tenant), text(redirectUri, 'redirectUri')));
    },
  },
  {
    method: 'POST',
    path: 'finish',
    handler: async ({ service, body }) => {
      const { tenant, code, state, iss } = body();
      const signedIn = await service.finishCodeFlow(tenantOf(tenant), { code: text(code, 'code'), state: text(state, 'state'), ...(typeof iss === 'string' && iss !== '' ? { iss } : {}) });
      signInAuditLog.info('signed in', { audit: { action: 'sign-in', via: 'console', tenant: signedIn.tenant, tokenId: signedIn.tokenId, person: signedIn.person, expiresAt: signedIn.expiresAt } });
      return jsonResponse(200, signedIn);
    },
  },
  { method: 'POST', path: 'device', handler: async ({ service, body }) => jsonResponse(200, await service.startDevice(tenantOf(body().tenant))) },
  {
    method: 'POST',
    path: 'device/poll',
    handler: async ({ service, body }) => {
      const { tenant, handle } = body();
      const polled = await service.pollDevice(tenantOf(tenant), text(handle, 'handle'));
      if (polled.status === 'signed-in') signInAuditLog.info('signed in', { audit: { action: 'sign-in', via: 'device', tenant: polled.tenant, tokenId: polled.tokenId, person: polled.person, expiresAt: polled.expiresAt } });
      return jsonResponse(200, polled);
    },
  },
  {
    method: 'POST',
    path: 'signout',
    handler: async ({ runtime, context }) => {
      const principal = requirePrincipal(context);
      if (principal.person === undefined) throw new RelayError('not-a-sign-in', 400, 'this token was not issued by a team sign-in; an admin revokes it (DELETE /admin/tokens/{id})');
      const revoked = await adminServiceFor(runtime).revokeToken(principal.tenant, principal.tokenId, { actor: principal });
      signInAuditLog.info('signed out', { audit: { action: 'sign-out', tenant: principal.tenant, tokenId: principal.tokenId, person: principal.person } });
      return jsonResponse(200, { signedOut: true, connectionsClosed: revoked.connectionsClosed, streamsEnded: revoked.streamsEnded });
    },
  },
];

export async function signInRoute(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  const { handler } = matchRoute(SIGN_IN_ROUTES, event.requestContext.http.method.toUpperCase(), event.rawPath.slice('/signin/'.length));
  const service = new SignInService({
    providers: runtime.teamSignIn.providers,
    client: runtime.teamSignIn.client,
    tokens: runtime.tokens,
    sealer: runtime.bridges.sealer,
    mintId: runtime.mintId,
    now: runtime.now,
  });
  return handler({ runtime, service, event, context, body: () => jsonObjectOf(event.body ?? '') });
}

/** An unknown or malformed tenant answers like a tenant without a provider: tenants cannot be probed. */
function tenantOf(value: unknown): string {
  if (typeof value !== 'string' || !isTenantId(value)) throw noIdentityProvider(String(value ?? ''));
  return value;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 4096) throw invalidSignIn(`${name} is a non-empty string`);
  return value;
}

function jsonObjectOf(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Falls through to the refusal.
  }
  throw invalidSignIn('the body is a JSON object');
}
