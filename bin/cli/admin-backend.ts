/**
 * Where the CLI's admin operations go: the relay's admin routes (HTTP mode) or DynamoDB
 * through the same admin service the relay runs (direct mode, which needs no token and is how
 * a new deployment gets its first one).
 */
import type { Environment } from '../../src/config/env-readers.ts';
import { RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import type { AdminOperations, IssueOptions } from '../../src/admin/admin-operations.ts';
import { HttpAdminClient } from '../../src/admin/http-admin-client.ts';
import type { OperatorOperations } from '../../src/admin/operator-admin.ts';
import type { BridgeOperations } from '../../src/admin/bridge-admin.ts';
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

export async function adminBackend(invocation: Invocation, env: Environment): Promise<AdminBackend> {
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
  // Loaded only here: direct mode needs the relay's stores and the AWS SDK, HTTP mode neither.
  return (await import('./direct-admin-backend.ts')).directAdminBackend(env, tenantsTable);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
