/**
 * The push lane's part of the composition root: subscriptions in the tenants table, VAPID keys
 * derived from the configured seeds, messages sent by `web-push` through a guarded poster of
 * its own (the sinks' address rule), and the bridges' letter store, retry queue, retry policy
 * and live budget, so the push lane keeps the sinks' guarantees. Without a seed the transport
 * holds no key: subscribing is refused (501) and nothing is sent.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RelayConfig } from '../../src/config/relay-config.ts';
import { SINK_RETRY_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { httpSinkPoster } from '../../src/gateway/http-sink-poster.ts';
import { vapidKeysFromSeed } from '../../src/gateway/vapid-keys.ts';
import { webPushSender } from '../../src/gateway/web-push-sender.ts';
import type { BridgeRuntime } from '../../src/relay/bridges/bridge-runtime.ts';
import { SinkCircuits } from '../../src/relay/bridges/sink-circuit.ts';
import type { Clock, RelayMetrics } from '../../src/relay/ports/index.ts';
import type { PushDeps } from '../../src/relay/push/deliver-pushes.ts';
import type { PushSubscribersDeps } from '../../src/relay/push/push-subscribers.ts';
import type { PushTransport } from '../../src/relay/push/push-transport-port.ts';
import { PushSubscriptionStore } from '../../src/store/push-subscription-store.ts';

/** What the push use cases work with: the live lane, the retry worker and the subscription routes. */
export type PushRuntime = PushDeps & PushSubscribersDeps;

export interface PushDependencies {
  config: RelayConfig;
  dynamo: DynamoDBClient;
  now: Clock;
  metrics: RelayMetrics;
  bridges: BridgeRuntime;
  /** The transport; built from the configuration when absent. */
  transport?: PushTransport;
}

/** A request's follow-up reaches whoever was sent the request within this long (a week). */
export const NOTIFIED_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export function createPush(dependencies: PushDependencies): PushRuntime {
  const { config, dynamo, now, bridges } = dependencies;
  const addresses = bridges.rules.addresses;
  return {
    subscriptions: new PushSubscriptionStore(dynamo, config.tables.tenants, now),
    transport:
      dependencies.transport ??
      webPushSender({ keys: config.push.vapidSeeds.map(vapidKeysFromSeed), subject: config.push.vapidSubject, post: httpSinkPoster({ addresses }) }),
    metrics: dependencies.metrics,
    now,
    consoleUrl: config.push.consoleUrl ?? '/console/',
    deadLetters: bridges.deadLetters,
    retryQueue: bridges.retryQueue,
    circuits: new SinkCircuits(config.bridges.circuitOpenMs, now),
    retry: bridges.retry,
    liveBudgetMs: bridges.liveBudgetMs,
    requestTimeoutMs: bridges.requestTimeoutMs,
    leaseMs: SINK_RETRY_TIMEOUT_SECONDS * 1000,
    notifiedLifetimeMs: NOTIFIED_LIFETIME_MS,
    addresses,
  };
}
