/**
 * Web Push subscriptions of the caller (`src/relay/push/push-subscribers.ts`): the relay's VAPID
 * public key a browser subscribes under, registering a browser, listing and removing.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { requirePrincipal } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { RelayError } from '../../src/errors/relay-error.ts';
import { listPush, registerPush, removePush, vapidKeyOf } from '../../src/relay/push/push-subscribers.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import type { Route } from './route-table.ts';

type Response = APIGatewayProxyStructuredResultV2;
type RouteHandler = (runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext, params: Record<string, string>) => Promise<Response>;

export const PUSH_ROUTES: readonly Route<RouteHandler>[] = [
  {
    method: 'GET',
    path: 'push/key',
    handler: async (runtime, _event, context) => {
      requirePrincipal(context);
      return jsonResponse(200, { vapidKey: vapidKeyOf(runtime.push) });
    },
  },
  { method: 'GET', path: 'push/subscriptions', handler: async (runtime, _event, context) => jsonResponse(200, { subscriptions: await listPush(runtime.push, requirePrincipal(context)) }) },
  { method: 'POST', path: 'push/subscriptions', handler: async (runtime, event, context) => jsonResponse(201, await registerPush(runtime.push, requirePrincipal(context), jsonBodyOf(event.body ?? ''))) },
  {
    method: 'DELETE',
    path: 'push/subscriptions/:id',
    handler: async (runtime, _event, context, params) => {
      await removePush(runtime.push, requirePrincipal(context), params.id as string);
      return { statusCode: 204, headers: { 'cache-control': 'no-store' } };
    },
  },
];

function jsonBodyOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RelayError('invalid-request', 400, 'the body is not JSON');
  }
}
