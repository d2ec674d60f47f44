/**
 * The bridges' part of the composition root: sink settings and letters on the tenants table,
 * secrets sealed by KMS (AWS) or a local key, HTTP posts through agents that refuse
 * disallowed addresses, PutEvents through an EventBridge client built here or injected (the
 * local stand-in in tests), and the sink-retry queue: SQS when the deployment names one, else
 * the one injected (the local stack's), else an in-process queue working the retry lane here.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { KMSClient } from '@aws-sdk/client-kms';
import { ConfigurationError } from '../../src/config/env-readers.ts';
import { SINK_RETRY_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import type { RelayConfig } from '../../src/config/relay-config.ts';
import { BRIDGE_VARIABLES } from '../../src/config/relay-environment.ts';
import { putEvents } from '../../src/gateway/eventbridge-putter.ts';
import { httpSinkPoster } from '../../src/gateway/http-sink-poster.ts';
import { localRetryQueue } from '../../src/gateway/local-retry-queue.ts';
import { sqsWakeUps } from '../../src/gateway/sqs-wake-ups.ts';
import type { BridgeRuntime } from '../../src/relay/bridges/bridge-runtime.ts';
import { retryLetter } from '../../src/relay/bridges/retry-lane.ts';
import { SinkCircuits } from '../../src/relay/bridges/sink-circuit.ts';
import type { Clock, IdMinter, SecretSealer, SinkRetryQueuePort, SinkRetryWakeUp } from '../../src/relay/ports/index.ts';
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
  /** The sink-retry queue (the local stack's, shared by its functions); built from the configuration when absent. */
  retryQueue?: SinkRetryQueuePort;
  /** Works a push letter's wake-up, for the in-process queue built here (the push lane shares the retry worker). */
  retryPush?: (wakeUp: SinkRetryWakeUp) => Promise<unknown>;
}

/** Receives of one wake-up before it goes to the failure queue (the retry queue's redrive policy). */
export const SINK_RETRY_MAX_RECEIVES = 5;

export function createBridges(dependencies: BridgeDependencies): BridgeRuntime {
  const { config, dynamo, now, mintId } = dependencies;
  const settings = config.bridges;
  let eventBridge = dependencies.eventBridge;
  const eventBridgeClient = (): EventBridgeClient =>
    (eventBridge ??= new EventBridgeClient({ region: config.region, ...(settings.eventBridgeEndpoint === undefined ? {} : { endpoint: settings.eventBridgeEndpoint }) }));
  const addresses = { allowLoopback: settings.allowLoopbackSinks };
  const postHttp = httpSinkPoster({ addresses });
  const bridges: BridgeRuntime = {
    sinks: new BridgeSinkStore(dynamo, config.tables.tenants),
    deadLetters: new DeadLetterStore(dynamo, config.tables.tenants, now, mintId),
    sealer: sealerFor(config),
    transport: { postHttp, putEvents: (busArn, entries, timeoutMs) => putEvents(eventBridgeClient(), busArn, entries, timeoutMs) },
    now,
    retry: settings.retry,
    retryQueue: dependencies.retryQueue ?? retryQueueFor(config, () => bridges, dependencies.retryPush),
    circuits: new SinkCircuits(settings.circuitOpenMs, now),
    liveBudgetMs: settings.liveBudgetMs,
    requestTimeoutMs: settings.retryTimeoutMs,
    leaseMs: SINK_RETRY_TIMEOUT_SECONDS * 1000,
    rules: { allowedEventBuses: settings.eventBuses, addresses },
  };
  return bridges;
}

function retryQueueFor(config: RelayConfig, bridges: () => BridgeRuntime, retryPush: ((wakeUp: SinkRetryWakeUp) => Promise<unknown>) | undefined): SinkRetryQueuePort {
  const { retryQueueUrl, retryConcurrency } = config.bridges;
  if (retryQueueUrl !== undefined) return sqsWakeUps(new SQSClient({ region: config.region, maxAttempts: 3 }), retryQueueUrl);
  // No queue named and none injected (a process of its own, e.g. a test): the retry lane runs here.
  const queue = localRetryQueue({ concurrency: retryConcurrency, visibilityTimeoutMs: SINK_RETRY_TIMEOUT_SECONDS * 1000, maxReceives: SINK_RETRY_MAX_RECEIVES });
  queue.consumeWith(async (wakeUps) => {
    const settled = await Promise.allSettled(wakeUps.map((wakeUp) => (wakeUp.lane === 'push' ? (retryPush?.(wakeUp) ?? Promise.resolve()) : retryLetter(bridges(), wakeUp))));
    return wakeUps.filter((_, index) => settled[index]?.status === 'rejected');
  });
  return queue;
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
