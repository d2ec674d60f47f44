/**
 * Where the CLI's admin operations go: the relay's admin routes (HTTP mode) or DynamoDB
 * through the same admin service the relay runs (direct mode, which needs no token and is how
 * a new deployment gets its first one).
 */
import { randomBytes } from 'node:crypto';
import type { Environment } from '../../src/config/env-readers.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import type { AdminOperations, IssueOptions } from '../../src/admin/admin-operations.ts';
import { AdminService, adminServiceFor } from '../../src/admin/admin-service.ts';
import { HttpAdminClient } from '../../src/admin/http-admin-client.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { createRuntime } from '../../src/relay/runtime.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { TenantStore } from '../../src/store/tenant-store.ts';
import { useLocalCredentials } from '../../local/local-credentials.ts';
import { UsageError } from './cli-arguments.ts';
import type { Invocation } from './cli-arguments.ts';

export interface AdminBackend {
  mode: 'http' | 'direct';
  operations: AdminOperations;
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
    return {
      mode: 'http',
      operations: new HttpAdminClient(url, token),
      issueOptions: {},
      unreachableConnectionsHint: 'this relay cannot reach WebSocket connections from its HTTP function (no AEP_WS_MANAGEMENT_ENDPOINT)',
      close: () => undefined,
    };
  }
  if (invocation.token !== undefined) throw new UsageError('--token is for HTTP mode; give --url (or AEP_URL) too');
  const tenantsTable = nonEmpty(env.AEP_TENANTS_TABLE);
  if (tenantsTable === undefined) {
    throw new UsageError('no relay to talk to: give --url and an admin token (HTTP mode), or set AEP_TENANTS_TABLE with AWS credentials (direct mode)');
  }
  const endpoint = nonEmpty(env.AEP_DYNAMODB_ENDPOINT);
  // DynamoDB Local takes any credentials, but the SDK signs requests and needs some.
  if (endpoint !== undefined) useLocalCredentials();
  const reachesConnections = [env.AEP_EVENTS_TABLE, env.AEP_CONNECTIONS_TABLE, env.AEP_WS_MANAGEMENT_ENDPOINT].every((value) => nonEmpty(value) !== undefined);
  const hint = 'open WebSocket connections were not closed: set AEP_EVENTS_TABLE, AEP_CONNECTIONS_TABLE and AEP_WS_MANAGEMENT_ENDPOINT to close them (otherwise they last until they end, at most 2 hours)';
  if (reachesConnections) {
    const runtime = createRuntime(readRelayConfig(env));
    return { mode: 'direct', operations: adminServiceFor(runtime), issueOptions: { createTenant: true }, unreachableConnectionsHint: hint, close: () => runtime.dynamo.destroy() };
  }
  const dynamo = createDynamoClient({ region: nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1', ...(endpoint === undefined ? {} : { endpoint }) });
  const now = () => Date.now();
  const service = new AdminService({ tenants: new TenantStore(dynamo, tenantsTable, now), now, mintId: ulidFactory(now, (length) => randomBytes(length)) });
  return { mode: 'direct', operations: service, issueOptions: { createTenant: true }, unreachableConnectionsHint: hint, close: () => dynamo.destroy() };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
