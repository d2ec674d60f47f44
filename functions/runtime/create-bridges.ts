/**
 * The bridges' part of the composition root: sink settings and dead letters on the tenants
 * table, secrets sealed by KMS (AWS) or a local key, HTTP posts with `fetch`, and PutEvents
 * through an EventBridge client built here or injected (the local stand-in in tests).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { ConfigurationError } from '../../src/config/env-readers.ts';
import type { RelayConfig } from '../../src/config/relay-config.ts';
import { BRIDGE_VARIABLES } from '../../src/config/relay-environment.ts';
import { putEvents } from '../../src/gateway/eventbridge-putter.ts';
import { postHttp } from '../../src/gateway/http-sink-poster.ts';
import type { BridgeRuntime } from '../../src/relay/bridges/bridge-runtime.ts';
import type { Clock, IdMinter, SecretSealer } from '../../src/relay/ports/index.ts';
import { aesSecretSealer } from '../../src/store/aes-secret-sealer.ts';
import { BridgeSinkStore } from '../../src/store/bridge-sink-store.ts';
import { DeadLetterStore } from '../../src/store/dead-letter-store.ts';
import { kmsSecretSealer } from '../../src/store/kms-secret-sealer.ts';

export interface BridgeDependencies {
  config: RelayConfig;
  dynamo: DynamoDBClient;
  now: Clock;
  mintId: IdMinter;
  /** PutEvents client; built from the configuration when absent. */
  eventBridge?: EventBridgeClient;
}

export function createBridges(dependencies: BridgeDependencies): BridgeRuntime {
  const { config, dynamo, now, mintId } = dependencies;
  const settings = config.bridges;
  let eventBridge = dependencies.eventBridge;
  const eventBridgeClient = (): EventBridgeClient =>
    (eventBridge ??= new EventBridgeClient({ region: config.region, ...(settings.eventBridgeEndpoint === undefined ? {} : { endpoint: settings.eventBridgeEndpoint }) }));
  return {
    sinks: new BridgeSinkStore(dynamo, config.tables.tenants),
    deadLetters: new DeadLetterStore(dynamo, config.tables.tenants, now, mintId),
    sealer: sealerFor(config),
    transport: { postHttp: (delivery) => postHttp(delivery), putEvents: (busArn, entries) => putEvents(eventBridgeClient(), busArn, entries) },
    now,
    sleep: async (ms) => {
      await sleep(ms);
    },
    retry: settings.retry,
    allowedEventBuses: settings.eventBuses,
  };
}

function sealerFor(config: RelayConfig): SecretSealer {
  const { kmsKeyId, sealKey } = config.bridges;
  if (kmsKeyId !== undefined) return kmsSecretSealer(new KMSClient({ region: config.region }), kmsKeyId);
  if (sealKey !== undefined) return aesSecretSealer(sealKey);
  const missing = async (): Promise<never> => {
    throw new ConfigurationError(`bridge sinks with secrets need ${BRIDGE_VARIABLES.kmsKeyId} or ${BRIDGE_VARIABLES.sealKey}`);
  };
  return { seal: missing, open: missing };
}
