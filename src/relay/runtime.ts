/**
 * Builds the relay's long-lived parts (clients, stores) from configuration. Handlers call
 * this once at module scope; per-request state never lives here.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RelayConfig } from '../config/relay-config.ts';
import { ulidFactory } from '../protocol/ulid.ts';
import { CapacityMeter, registerMeter } from '../store/capacity-meter.ts';
import { createDynamoClient } from '../store/dynamo-client.ts';
import { EventLog } from '../store/event-log.ts';
import { TenantStore } from '../store/tenant-store.ts';
import { ConnectionStore } from '../store/connection-store.ts';
import { InboxStore } from '../store/inbox-store.ts';
import { QuotaStore } from '../store/quota-store.ts';
import { managementApiPoster } from '../gateway/connection-poster.ts';
import type { ConnectionPoster } from '../gateway/connection-poster.ts';
import { ConfigurationError } from '../config/env-readers.ts';

export interface RelayRuntime {
  config: RelayConfig;
  dynamo: DynamoDBClient;
  meter: CapacityMeter;
  eventLog: EventLog;
  tenants: TenantStore;
  connections: ConnectionStore;
  quotas: QuotaStore;
  /** Deliveries fan-out hands to SSE streams (see `inbox-store.ts`). */
  inbox: InboxStore;
  /** Posts to WebSocket clients; throws on first use when no management endpoint is configured. */
  poster: ConnectionPoster;
  mintId: () => string;
  now: () => number;
}

export function createRuntime(config: RelayConfig): RelayRuntime {
  const meter = registerMeter(new CapacityMeter());
  const dynamo = createDynamoClient({ region: config.region, ...(config.dynamoEndpoint === undefined ? {} : { endpoint: config.dynamoEndpoint }), meter });
  const now = () => Date.now();
  const mintId = ulidFactory(now, (length) => randomBytes(length));
  const quotas = new QuotaStore(dynamo, { tenantsTable: config.tables.tenants, connectionsTable: config.tables.connections, now, cacheMs: 30_000 });
  return {
    config,
    dynamo,
    quotas,
    meter,
    now,
    mintId,
    eventLog: new EventLog(dynamo, {
      tableName: config.tables.events,
      replayBuffer: config.replayBuffer,
      retentionDays: config.retentionDays,
      liveOnlySeconds: config.liveOnlySeconds,
      now,
      mintId,
    }),
    tenants: new TenantStore(dynamo, config.tables.tenants, now),
    connections: new ConnectionStore(dynamo, {
      tableName: config.tables.connections,
      now,
      connectionLifetimeSeconds: config.connectionLifetimeSeconds,
      maxPendingBytes: config.maxPendingBytes,
      onConnectionRemoved: (tenant) => quotas.releaseConnection(tenant),
    }),
    inbox: new InboxStore(dynamo, { tableName: config.tables.connections, now, mintId, lifetimeSeconds: 3600, lookBackMs: 1000 }),
    poster: posterFor(config),
  };
}

function posterFor(config: RelayConfig): ConnectionPoster {
  const endpoint = config.managementEndpoint;
  if (endpoint === undefined) {
    const missing = (): never => {
      throw new ConfigurationError('missing environment variable AEP_WS_MANAGEMENT_ENDPOINT');
    };
    return { post: async () => missing(), close: async () => missing() };
  }
  return managementApiPoster({ endpoint, region: config.region });
}
