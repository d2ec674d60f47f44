/**
 * Builds the relay's long-lived parts (clients, stores) from configuration. Handlers call
 * this once at module scope; per-request state never lives here.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RelayConfig } from '../config/relay-config.ts';
import { ulidFactory } from '../protocol/ulid.ts';
import { CapacityMeter } from '../store/capacity-meter.ts';
import { createDynamoClient } from '../store/dynamo-client.ts';
import { EventLog } from '../store/event-log.ts';
import { TenantStore } from '../store/tenant-store.ts';

export interface RelayRuntime {
  config: RelayConfig;
  dynamo: DynamoDBClient;
  meter: CapacityMeter;
  eventLog: EventLog;
  tenants: TenantStore;
  mintId: () => string;
  now: () => number;
}

export function createRuntime(config: RelayConfig): RelayRuntime {
  const meter = new CapacityMeter();
  const dynamo = createDynamoClient({ region: config.region, ...(config.dynamoEndpoint === undefined ? {} : { endpoint: config.dynamoEndpoint }), meter });
  const now = () => Date.now();
  const mintId = ulidFactory(now, (length) => randomBytes(length));
  return {
    config,
    dynamo,
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
  };
}
