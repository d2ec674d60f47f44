/**
 * The local stack's test-only fault layer. `local/stack.ts` loads it only when `AEP_FAULTS`
 * is set (to a fault plan, `fault-plan.ts`; `{}` enables the layer with nothing broken), so a
 * normal `npm start` never injects anything and serves no `/__faults` route.
 *
 * It breaks, on demand:
 * - DynamoDB calls of every relay handler (`dynamo-faults.ts`): throttling and server errors,
 *   which the SDK's own retry absorbs or surfaces.
 * - Fan-out invocations from the stream poller (`fanout-faults.ts`): failures mid-batch.
 * - Posts to WebSocket connections (`connection-faults.ts`): 410, 429, 500.
 * - The stream poller itself: stop and start it, as a crashed and restarted poller.
 *
 * Control (on the gateway's HTTP port, no token: this route exists only in a test stack):
 * - `GET /__faults`: the current plan and what was injected so far.
 * - `PUT /__faults`: replaces the plan (body: a plan); counters and statistics start over.
 * - `POST /__faults/poller/stop`, `POST /__faults/poller/start`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ConnectionRegistry } from '../gateway/connection-registry.ts';
import type { ConnectionsApi } from '../gateway/connections-api.ts';
import type { HttpApiHandler } from '../gateway/http-api.ts';
import type { FanoutHandler } from '../stream-batch-delivery.ts';
import type { StreamPoller } from '../stream-poller.ts';
import { ConnectionFaults } from './connection-faults.ts';
import { DynamoFaults } from './dynamo-faults.ts';
import { FanoutFaults } from './fanout-faults.ts';
import { parseFaultPlan, seededRandom } from './fault-plan.ts';
import type { FaultPlan } from './fault-plan.ts';

export const FAULTS_ROUTE = '/__faults';

export interface FaultLayer {
  wrapHttp(handler: HttpApiHandler): HttpApiHandler;
  wrapFanout(handler: FanoutHandler): FanoutHandler;
  wrapConnections(api: ConnectionsApi, registry: ConnectionRegistry): ConnectionsApi;
  attachPoller(poller: StreamPoller): void;
  /** Adds the DynamoDB fault middleware to a client (the stack passes each function's client). */
  decorateDynamo(client: DynamoDBClient, functionName?: string): void;
}

/** Creates the layer from `AEP_FAULTS`; the stack applies it to the clients and routes it builds. */
export function createFaultLayer(planText: string): FaultLayer {
  let plan: FaultPlan = parseFaultPlan(planText);
  let random = seededRandom(plan.seed ?? 1);
  const dynamo = new DynamoFaults(() => random());
  const fanout = new FanoutFaults();
  const connections = new ConnectionFaults();
  let poller: StreamPoller | undefined;
  let pollerRunning = false;

  const apply = (next: FaultPlan) => {
    plan = next;
    random = seededRandom(next.seed ?? 1);
    dynamo.configure(next.dynamo ?? []);
    fanout.configure(next.fanout);
    connections.configure(next.connections ?? []);
  };
  apply(plan);
  console.error(JSON.stringify({ level: 'warn', component: 'local-fault-layer', message: 'fault injection enabled (AEP_FAULTS)', plan }));

  const report = () => ({ plan, dynamo: dynamo.snapshot(), fanout: fanout.snapshot(), connections: connections.snapshot(), poller: { running: pollerRunning } });

  const control = async (method: string, path: string, body: string): Promise<APIGatewayProxyStructuredResultV2> => {
    if (path === FAULTS_ROUTE && method === 'GET') return json(200, report());
    if (path === FAULTS_ROUTE && method === 'PUT') {
      try {
        apply(parseFaultPlan(body === '' ? '{}' : body));
      } catch (error) {
        return json(400, { error: 'invalid-fault-plan', detail: error instanceof Error ? error.message : String(error) });
      }
      return json(200, report());
    }
    if (path === `${FAULTS_ROUTE}/poller/stop` && method === 'POST') {
      await poller?.stop();
      pollerRunning = false;
      return json(200, report());
    }
    if (path === `${FAULTS_ROUTE}/poller/start` && method === 'POST') {
      await poller?.start();
      pollerRunning = poller !== undefined;
      return json(200, report());
    }
    return json(404, { error: 'not-found', detail: `no fault control at ${method} ${path}` });
  };

  return {
    wrapHttp: (handler) => async (event, context) => {
      if (event.rawPath !== FAULTS_ROUTE && !event.rawPath.startsWith(`${FAULTS_ROUTE}/`)) return handler(event, context);
      const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      return control(event.requestContext.http.method.toUpperCase(), event.rawPath, body);
    },
    wrapFanout: (handler) => fanout.wrap(handler),
    wrapConnections: (api, registry) => connections.wrap(api, registry),
    attachPoller: (attached) => {
      poller = attached;
      pollerRunning = true;
    },
    decorateDynamo: (client, functionName) => dynamo.decorate(client, functionName),
  };
}

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
}
