/**
 * Where the CLI's admin operations go: the relay's admin routes (HTTP mode) or DynamoDB
 * through the same admin service the relay runs (direct mode, which needs no token and is how
 * a new deployment gets its first one).
 */
import { randomBytes } from 'node:crypto';
import type { Environment } from '../../src/config/env-readers.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import type { AdminOperations, IssueOptions } from '../../src/admin/admin-operations.ts';
import { AdminService, adminServiceFor } from '../../src/admin/admin-service.ts';
import { HttpAdminClient } from '../../src/admin/http-admin-client.ts';
import type { OperatorOperations } from '../../src/admin/operator-admin.ts';
import type { BridgeOperations } from '../../src/admin/bridge-admin.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { managementApiPoster } from '../../src/gateway/connection-poster.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { EMULATOR_CREDENTIALS } from '../../src/store/emulator-credentials.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { UsageError } from './cli-arguments.ts';
import type { Invocation } from './cli-arguments.ts';

export interface AdminBackend {
  mode: 'http' | 'direct';
  operations: AdminOperations;
  /** HTTP mode only: the relay holds the key that seals sink secrets, so bridges are set through it. */
  bridges?: BridgeOperations;
  /** HTTP mode only: the token's Web Push subscriptions. */
  push?: Pick<HttpAdminClient, 'listPushSubscriptions' | 'removePushSubscription'>;
  /** HTTP mode only: trusted operators (identity-card keys), set through the relay's admin routes (audited there). */
  operators?: OperatorOperations;
  /** Direct mode creates a missing tenant on `tokens issue` (bootstrap); HTTP mode never does. */
  issueOptions: IssueOptions;
  /** What to tell the user when open connections could not be reached. */
  unreachableConnectionsHint: string;
  close(): void;
}

export function adminBackend(invocation: Invocation, env: Environment): AdminBackend {
  const url = invocation.url ?? nonEmpty(env.AEP_URL);
  if (url !== undefined) {
    const token = invocation.token ?? nonEmpty(env.AEP_ADMIN_TOKEN);
    if (token === undefined) throw new UsageError('HTTP mode needs an admin token: --token or AEP_ADMIN_TOKEN');
    const client = new HttpAdminClient(url, token);
    return {
      mode: 'http',
      operations: client,
      bridges: client,
      operators: client,
      push: client,
      issueOptions: {},
      unreachableConnectionsHint: `this relay cannot reach WebSocket connections from its HTTP function (no ${RELAY_VARIABLES.managementEndpoint})`,
      close: () => undefined,
    };
  }
  if (invocation.token !== undefined) throw new UsageError('--token is for HTTP mode; give --url (or AEP_URL) too');
  const tenantsTable = nonEmpty(env[RELAY_VARIABLES.tenantsTable]);
  if (tenantsTable === undefined) {
    throw new UsageError(`no relay to talk to: give --url and an admin token (HTTP mode), or set ${RELAY_VARIABLES.tenantsTable} with AWS credentials (direct mode)`);
  }
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
