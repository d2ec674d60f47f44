/**
 * The HTTP API routes (AEP-0003 §3.2 emit, §3.4 discovery), history (`history-routes.ts`), the health probe, the caller's
 * own grant (`GET /token`), Web Push subscriptions (`push-routes.ts`), and the admin
 * routes under `/admin/` (`admin-routes.ts`). Each route maps the request onto a use case.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { BearerSources } from '../../src/auth/bearer.ts';
import { grantViewOf } from '../../src/auth/grant-view.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { requirePrincipal } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { discoveryDocument, servedSurface } from '../../src/relay/discovery/discovery.ts';
import { ingest } from '../../src/relay/ingest/ingest.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { adminRoute } from './admin-routes.ts';
import { signInRoute } from './sign-in-routes.ts';
import { PUSH_ROUTES } from './push-routes.ts';
import { getHistory, getSessions } from './history-routes.ts';
import { matchRoute } from './route-table.ts';
import type { Route } from './route-table.ts';

type Response = APIGatewayProxyStructuredResultV2;
type RouteHandler = (runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext, params: Record<string, string>) => Promise<Response>;

const health: RouteHandler = async () => jsonResponse(200, { ok: true });

/**
 * Discovery is served without a token (AEP-0003 §3.4): it is how a client learns the
 * endpoints and capabilities before it has credentials, and it names nothing of any tenant
 * (the same document for every caller; a token, if sent, changes nothing).
 */
const discovery: RouteHandler = async (runtime) => jsonResponse(200, discoveryDocument(servedSurface(runtime.config)));

const postEvents: RouteHandler = async (runtime, event, context) => {
  const headers = event.headers ?? {};
  const result = await ingest(runtime, { principal: requirePrincipal(context), version: headers['aep-version'], contentType: headers['content-type'], body: event.body ?? '' });
  return jsonResponse(202, result);
};

/** The caller's own grant (`grant-view.ts`): any valid token may read its own, whatever its scopes. */
const ownToken: RouteHandler = async (_runtime, _event, context) => jsonResponse(200, grantViewOf(requirePrincipal(context)));

const PUBLIC_ROUTES: readonly Route<RouteHandler>[] = [
  { method: 'GET', path: 'healthz', handler: health },
  { method: 'HEAD', path: 'healthz', handler: health },
  { method: 'GET', path: 'events', handler: discovery },
  { method: 'POST', path: 'events', handler: postEvents },
  { method: 'GET', path: '.well-known/aep', handler: discovery },
  { method: 'GET', path: 'history', handler: getHistory },
  { method: 'GET', path: 'sessions', handler: getSessions },
  { method: 'GET', path: 'token', handler: ownToken },
  ...PUSH_ROUTES,
];

export async function route(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  if (event.rawPath.startsWith('/admin/')) return adminRoute(runtime, requirePrincipal(context), event);
  if (event.rawPath.startsWith('/signin/')) return signInRoute(runtime, event, context);
  const { handler, params } = matchRoute(PUBLIC_ROUTES, event.requestContext.http.method.toUpperCase(), event.rawPath);
  return handler(runtime, event, context, params);
}

/**
 * Where a request's token may come from: the `Authorization` header only. The query fallback
 * (AEP-0003 §8.1) exists for `EventSource`, which cannot set headers; it is kept where that
 * client connects (`GET /stream`, and the WebSocket handshake, which a browser cannot give a
 * header either), and refused here: `/history` and `/sessions` are fetched, and a token in a
 * URL lands in histories, proxies and referrers.
 */
export function credentialsOf(event: APIGatewayProxyEventV2): BearerSources {
  return {
    authorization: event.headers?.authorization,
    accessTokenQuery: event.queryStringParameters?.access_token,
    allowQueryToken: false,
  };
}
