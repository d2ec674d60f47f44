/**
 * `aep-relay` in direct mode: the admin operations run in this process against the relay's
 * tables (AWS credentials, or DynamoDB Local), as the relay's own functions run them.
 */
import { randomBytes } from 'node:crypto';
import type { Environment } from '../../src/config/env-readers.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import { AdminService, adminServiceFor } from '../../src/admin/admin-service.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { managementApiPoster } from '../../src/gateway/connection-poster.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { EMULATOR_CREDENTIALS } from '../../src/store/emulator-credentials.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import type { AdminBackend } from './admin-backend.ts';

export function directAdminBackend(env: Environment, tenantsTable: string): AdminBackend {
  const endpoint = nonEmpty(env[RELAY_VARIABLES.dynamoEndpoint]);
  // DynamoDB Local takes any credentials, but the SDK signs requests and needs some:
  // placeholders, unless the environment names credentials of its own (the local stack's
  // management endpoint takes only the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY `npm start` prints).
  const credentials = endpoint !== undefined && nonEmpty(env.AWS_ACCESS_KEY_ID) === undefined ? { credentials: EMULATOR_CREDENTIALS } : {};
  const { eventsTable, connectionsTable, managementEndpoint } = RELAY_VARIABLES;
  const reachesConnections = [env[eventsTable], env[connectionsTable], env[managementEndpoint]].every((value) => nonEmpty(value) !== undefined);
  const hint = `open WebSocket connections were not closed: set ${eventsTable}, ${connectionsTable} and ${managementEndpoint} to close them (otherwise they last until they end, at most 2 hours)`;
  if (reachesConnections) {
    const config = readRelayConfig(env);
    const dynamo = createDynamoClient({ region: config.region, ...(endpoint === undefined ? {} : { endpoint }), ...credentials });
    const poster = config.managementEndpoint === undefined ? undefined : managementApiPoster({ endpoint: config.managementEndpoint, region: config.region, ...credentials });
    const runtime = createRuntime({ config, dynamo, ...(poster === undefined ? {} : { poster }) });
    return { mode: 'direct', operations: adminServiceFor(runtime), issueOptions: { createTenant: true }, unreachableConnectionsHint: hint, close: () => dynamo.destroy() };
  }
  const dynamo = createDynamoClient({ region: nonEmpty(env[RELAY_VARIABLES.region]) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1', ...(endpoint === undefined ? {} : { endpoint }), ...credentials });
  const now = () => Date.now();
  // Quotas live on the tenant record; reading and setting them never touches the connections table.
  const quotas = new QuotaStore(dynamo, { tenantsTable, connectionsTable: nonEmpty(env[connectionsTable]) ?? '', now, cacheMs: 0 });
  const service = new AdminService({ ...tenantTableStores(dynamo, tenantsTable, now), quotas, now, mintId: ulidFactory(now, (length) => randomBytes(length)) });
  return { mode: 'direct', operations: service, issueOptions: { createTenant: true }, unreachableConnectionsHint: hint, close: () => dynamo.destroy() };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
