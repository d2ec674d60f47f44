/**
 * The composition root: builds the relay's runtime (its ports, implemented by the DynamoDB
 * and API Gateway adapters) from configuration. Each handler module calls it once at module
 * scope; per-request state never lives here.
 *
 * Clients are injected where a caller needs its own: the local stack passes a DynamoDB client
 * it metered (and, with AEP_FAULTS, fault-decorated); the CLI passes clients with placeholder
 * credentials for DynamoDB Local. Without them, production builds plain clients and asks
 * DynamoDB for consumed capacity only when given a `meter`.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError } from '../../src/config/env-readers.ts';
import type { RelayConfig } from '../../src/config/relay-config.ts';
import { managementApiPoster } from '../../src/gateway/connection-poster.ts';
import { lambdaDeliveryLanes } from '../../src/gateway/lambda-delivery-lanes.ts';
import type { DeliveryLanesPort } from '../../src/relay/fanout/delivery-lanes-port.ts';
import { sweptDeadlines } from '../../src/gateway/swept-deadlines.ts';
import { queuedDeadlines } from '../../src/gateway/queued-deadlines.ts';
import { timerDeadlines } from '../../src/gateway/timer-deadlines.ts';
import { DEADLINE_HORIZON_MS } from '../../src/config/function-timeouts.ts';
import { closeAtDeadline } from '../../src/relay/connections/connection-deadline.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { noMetrics } from '../../src/relay/ports/index.ts';
import type { Clock, ConnectionPoster, IdMinter, RelayMetrics, SinkRetryQueuePort } from '../../src/relay/ports/index.ts';
import type { RelayRuntime } from './relay-runtime.ts';
import { KnownOwners } from '../../src/relay/control/session-ownership.ts';
import { KnownClaims } from '../../src/relay/control/known-claims.ts';
import { FrameBudgets } from '../../src/relay/socket/frame-budget.ts';
import { EventAllowance } from '../../src/relay/ingest/event-allowance.ts';
import { RefusedTokens } from '../../src/relay/connections/refused-tokens.ts';
import type { CapacityMeter } from '../../src/store/capacity-meter.ts';
import { connectionTableStores } from '../../src/store/connection-table.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { DeadlineStore } from '../../src/store/deadline-store.ts';
import { EventLog } from '../../src/store/event-log.ts';
import { InboxStore } from '../../src/store/inbox-store.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { SessionOrderStore } from '../../src/store/session-order-store.ts';
import { SessionOwnerStore } from '../../src/store/session-owner-store.ts';
import { SessionSummaryStore } from '../../src/store/session-summaries.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { createBridges } from './create-bridges.ts';
import { createPush } from './create-push.ts';
import type { PushRuntime } from './create-push.ts';
import { retryPushLetter } from '../../src/relay/push/push-retry.ts';
import type { PushTransport } from '../../src/relay/push/push-transport-port.ts';
import { jwksFetcher } from '../../src/gateway/jwks-fetcher.ts';
import type { IdentityRuntime } from '../../src/relay/identity/identity-runtime.ts';
import { OperatorKeyCache } from '../../src/relay/identity/operator-keys.ts';
import { StandingCheck } from '../../src/relay/identity/standing-check.ts';
import { OperatorStore } from '../../src/store/operator-store.ts';
import { IdentityProviderStore } from '../../src/store/identity-provider-store.ts';
import { oidcProviderClient } from '../../src/gateway/oidc-provider-client.ts';

export interface RuntimeDependencies {
  config: RelayConfig;
  /** The DynamoDB client every store uses; built from `config` (and `meter`) when absent. */
  dynamo?: DynamoDBClient;
  /** Counts consumed capacity on the client built here; ignored when `dynamo` is given. */
  meter?: CapacityMeter;
  /** Posts to WebSocket clients; built from `config.managementEndpoint` when absent. */
  poster?: ConnectionPoster;
  /** PutEvents client for EventBridge sinks; built from `config.bridges` when absent. */
  eventBridge?: EventBridgeClient;
  /** The sink-retry queue the local stack shares between its functions; built from `config.bridges` when absent. */
  sinkRetryQueue?: SinkRetryQueuePort;
  /** Runs a batch's extra delivery lanes; built from `config.laneFunction` when absent (none without it). */
  deliveryLanes?: DeliveryLanesPort;
  /** Per-tenant metrics; records nothing when absent (tests, the CLI). The handlers pass the EMF adapter. */
  metrics?: RelayMetrics;
  /** Sends Web Push messages; built from `config.push` when absent. */
  pushTransport?: PushTransport;
  /** The clock every part reads; the system clock when absent (the delivery simulation runs its own). */
  now?: Clock;
  /** Mints event and entry ids; ULIDs from the clock and the system's randomness when absent. */
  mintId?: IdMinter;
}

export function createRuntime(dependencies: RuntimeDependencies): RelayRuntime {
  const { config } = dependencies;
  const dynamo =
    dependencies.dynamo ??
    createDynamoClient({
      region: config.region,
      ...(config.dynamoEndpoint === undefined ? {} : { endpoint: config.dynamoEndpoint }),
      ...(dependencies.meter === undefined ? {} : { meter: dependencies.meter }),
    });
  const now = dependencies.now ?? (() => Date.now());
  const mintId = dependencies.mintId ?? ulidFactory(now, (length) => randomBytes(length));
  const quotas = new QuotaStore(dynamo, { tenantsTable: config.tables.tenants, connectionsTable: config.tables.connections, now, cacheMs: 30_000 });
  const connectionTable = connectionTableStores(dynamo, {
    tableName: config.tables.connections,
    now,
    connectionLifetimeSeconds: config.connectionLifetimeSeconds,
    maxPendingBytes: config.maxPendingBytes,
    onConnectionRemoved: (tenant, connectionId) => quotas.releaseConnection(tenant, connectionId),
  });
  const deadlineIndex = new DeadlineStore(dynamo, { tableName: config.tables.connections });
  const metrics = dependencies.metrics ?? noMetrics;
  // The push lane shares the bridges' retry worker; its letters are worked by the push runtime, built next.
  let push: PushRuntime | undefined;
  const bridges = createBridges({
    config,
    dynamo,
    now,
    mintId,
    ...(dependencies.eventBridge === undefined ? {} : { eventBridge: dependencies.eventBridge }),
    ...(dependencies.sinkRetryQueue === undefined ? {} : { retryQueue: dependencies.sinkRetryQueue }),
    retryPush: async (wakeUp) => (push === undefined ? undefined : retryPushLetter(push, wakeUp)),
  });
  push = createPush({ config, dynamo, now, metrics, bridges, ...(dependencies.pushTransport === undefined ? {} : { transport: dependencies.pushTransport }) });
  const runtime: RelayRuntime = {
    config,
    eventLog: new EventLog(dynamo, {
      tableName: config.tables.events,
      replayBuffer: config.replayBuffer,
      retentionDays: config.retentionDays,
      liveOnlySeconds: config.liveOnlySeconds,
      retentionDaysOf: async (tenant) => (await quotas.quotasOf(tenant)).retentionDays,
      now,
      mintId,
    }),
    sessionSummaries: new SessionSummaryStore(dynamo, { tableName: config.tables.events, now }),
    sessionOrder: new SessionOrderStore(dynamo, {
      tableName: config.tables.events,
      now,
      lifetimeSecondsOf: async (tenant) => ((await quotas.quotasOf(tenant)).retentionDays ?? config.retentionDays) * 86_400,
    }),
    ...connectionTable,
    ...tenantTableStores(dynamo, config.tables.tenants, now),
    quotas,
    inbox: new InboxStore(dynamo, { tableName: config.tables.connections, now, mintId, lifetimeSeconds: 3600 }),
    poster: dependencies.poster ?? posterFor(config),
    ...lanesFor(config, dependencies.deliveryLanes),
    sessionOwners: new SessionOwnerStore(dynamo, { tableName: config.tables.events, lifetimeSeconds: config.retentionDays * 86_400, now }),
    knownOwners: new KnownOwners(),
    knownClaims: new KnownClaims(),
    frameBudgets: new FrameBudgets(config.limits.socketFramesPerSecond, config.limits.socketFrameBurst, now),
    eventAllowance: new EventAllowance(quotas, now),
    refusedTokens: new RefusedTokens(now),
    // Every deadline goes into the index the minute sweep reads; a near one is also handed on:
    // to the deadline queue where the deployed stack names one (delivered at the deadline), else
    // (the local stack) to a timer of this process, which a long-lived process can keep.
    deadlineIndex,
    deadlines: sweptDeadlines({
      index: deadlineIndex,
      horizonMs: DEADLINE_HORIZON_MS,
      now,
      near:
        config.deadlineQueueUrl === undefined
          ? timerDeadlines((deadline) => closeAtDeadline(runtime, deadline), now)
          : queuedDeadlines({ client: new SQSClient({ region: config.region, maxAttempts: 3 }), queueUrl: config.deadlineQueueUrl, now }),
    }),
    bridges,
    push,
    identity: identityRuntimeFor(dynamo, config, now),
    // Providers' addresses follow the sinks' rule too (loopback only on the local stack).
    teamSignIn: { providers: new IdentityProviderStore(dynamo, config.tables.tenants, now), client: oidcProviderClient({ addresses: { allowLoopback: config.bridges.allowLoopbackSinks }, now }) },
    metrics,
    mintId,
    now,
  };
  return runtime;
}

/** Key set URLs follow the sinks' address rule (loopback only where sinks may reach it: the local stack). */
function identityRuntimeFor(dynamo: DynamoDBClient, config: RelayConfig, now: () => number): IdentityRuntime {
  const addresses = { allowLoopback: config.bridges.allowLoopbackSinks };
  const operators = new OperatorStore(dynamo, config.tables.tenants);
  const keys = new OperatorKeyCache(jwksFetcher({ addresses }), now);
  return { operators, keys, standings: new StandingCheck({ operators, keys, now }), addresses };
}

function lanesFor(config: RelayConfig, given: DeliveryLanesPort | undefined): { deliveryLanes?: DeliveryLanesPort } {
  if (given !== undefined) return { deliveryLanes: given };
  if (config.laneFunction === undefined) return {};
  return { deliveryLanes: lambdaDeliveryLanes({ functionName: config.laneFunction, region: config.region, ...(config.laneEndpoint === undefined ? {} : { endpoint: config.laneEndpoint }) }) };
}

function posterFor(config: RelayConfig): ConnectionPoster {
  const endpoint = config.managementEndpoint;
  if (endpoint === undefined) {
    const missing = (): never => {
      throw new ConfigurationError('missing environment variable AEP_WS_MANAGEMENT_ENDPOINT');
    };
    return { post: async () => missing(), close: async () => missing(), isOpen: async () => missing() };
  }
  return managementApiPoster({ endpoint, region: config.region, maxSockets: config.fanout.concurrency });
}
