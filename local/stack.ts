/**
 * The whole relay on one machine: DynamoDB Local, the tables from the shared definitions, a
 * `local` tenant with a dev token, and the local API Gateway invoking the same handlers the
 * cloud runs.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RelayConfig } from '../src/config/relay-config.ts';
import { readRelayConfig } from '../src/config/relay-config.ts';
import { hashTokenSecret, mintTokenSecret } from '../src/auth/token-secret.ts';
import { SCOPES } from '../src/auth/scopes.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { TenantStore } from '../src/store/tenant-store.ts';
import { createTables, localTableNames } from './create-tables.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import type { DynamoDbLocal } from './dynamodb-local.ts';
import { startGateway } from './gateway/server.ts';
import { useLocalCredentials } from './local-credentials.ts';
import type { LocalGateway } from './gateway/server.ts';

export const LOCAL_TENANT = 'local';

export interface StackOptions {
  /** 0 picks a free port. */
  port: number;
  inMemory: boolean;
  /** Where persistent data lives (git-ignored). */
  dataDir: string;
  devToken?: string;
  /** Extra relay environment (e.g. AEP_REPLAY_BUFFER), applied before the handlers load. */
  env?: Record<string, string>;
}

export interface RunningStack {
  baseUrl: string;
  dynamoEndpoint: string;
  devToken: string;
  config: RelayConfig;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  useLocalCredentials();
  const dynamo: DynamoDbLocal = await startDynamoDbLocal(options.inMemory ? {} : { dataDir: join(options.dataDir, 'dynamodb') });
  let gateway: LocalGateway | undefined;
  try {
    const names = localTableNames('aep-local');
    Object.assign(process.env, {
      AEP_EVENTS_TABLE: names.events,
      AEP_CONNECTIONS_TABLE: names.connections,
      AEP_TENANTS_TABLE: names.tenants,
      AEP_DYNAMODB_ENDPOINT: dynamo.endpoint,
      ...options.env,
    });
    const config = readRelayConfig(process.env);
    const client = createDynamoClient({ region: config.region, endpoint: dynamo.endpoint });
    await createTables(client, names);
    const devToken = await bootstrapDevToken(new TenantStore(client, names.tenants, Date.now), options);
    client.destroy();

    // Handlers read their configuration at module load, so they are imported only now.
    const http = await import('../functions/http/handler.ts');
    gateway = await startGateway({ http: http.handler }, options.port);
    const baseUrl = `http://127.0.0.1:${gateway.port}`;
    const runningGateway = gateway;
    return {
      baseUrl,
      dynamoEndpoint: dynamo.endpoint,
      devToken,
      config,
      stop: async () => {
        await runningGateway.close();
        await dynamo.stop();
      },
    };
  } catch (error) {
    await gateway?.close();
    await dynamo.stop();
    throw error;
  }
}

/**
 * Ensures the `local` tenant and a dev token with every scope. The token comes from
 * `devToken` when given; otherwise a persistent stack reuses the one it minted before
 * (kept in the git-ignored data folder) and an in-memory stack mints a fresh one.
 */
async function bootstrapDevToken(tenants: TenantStore, options: StackOptions): Promise<string> {
  await tenants.ensureTenant(LOCAL_TENANT);
  const tokenFile = join(options.dataDir, 'dev-token');
  let token = options.devToken;
  if (token === undefined && !options.inMemory && existsSync(tokenFile)) token = readFileSync(tokenFile, 'utf8').trim();
  token ??= mintTokenSecret();
  const digest = hashTokenSecret(token);
  if (!(await tenants.hasDigest(digest))) {
    await tenants.putToken({ tenant: LOCAL_TENANT, tokenId: `dev-${digest.slice(0, 12)}`, scopes: [...SCOPES], label: 'dev token (npm start)' }, digest);
  }
  if (!options.inMemory) {
    mkdirSync(options.dataDir, { recursive: true });
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  }
  return token;
}
