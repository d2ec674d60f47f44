/**
 * The relay's configuration, read once per process from the environment. Handlers receive
 * it as a value; the protocol core never reads the environment.
 */
import type { TableNames } from './table-names.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import { ConfigurationError, nonNegativeInteger, optionalString, positiveInteger, requiredString } from './env-readers.ts';
import type { Environment } from './env-readers.ts';
import { FANOUT_VARIABLES, LIMIT_VARIABLES, RELAY_VARIABLES, SSE_VARIABLES, SURFACE_ON } from './relay-environment.ts';
import { readBridgeConfig } from './bridge-config.ts';
import { readPushConfig } from './push-config.ts';
import type { PushConfig } from './push-config.ts';
import type { BridgeConfig } from './bridge-config.ts';

export interface RelayLimits {
  /** Largest request body `POST /events` accepts, in bytes (413 above it). */
  maxBodyBytes: number;
  /** Most events in one NDJSON batch (413 above it). */
  maxBatchEvents: number;
  /**
   * Largest single event, in bytes. Fan-out posts each event as one WebSocket message, and
   * API Gateway caps a message at 128 KiB, so a larger event could be stored but never delivered.
   */
  maxEventBytes: number;
  /** Most resume positions in one `from` (AEP-0003 §6.5 `limit-exceeded` above it). */
  maxFromPositions: number;
  /** Most subscriptions one WebSocket connection may hold. */
  maxSubscriptionsPerConnection: number;
  /**
   * Events per second a tenant may admit when its quotas set no `eventsPerSecond` (0: no
   * limit). Enforced by `event-allowance.ts` without a counter write per event.
   */
  defaultEventsPerSecond: number;
  /**
   * Frames per second one WebSocket connection may send (0: no budget), a token bucket held
   * in the socket function's memory (`socket/frame-budget.ts`); over it, a frame is answered
   * `limit-exceeded` in-band and costs no DynamoDB call.
   */
  socketFramesPerSecond: number;
  /** The frame budget's bucket: frames a connection may send at once before the rate applies. */
  socketFrameBurst: number;
}

export interface RelayConfig {
  region: string;
  tables: TableNames;
  /** DynamoDB endpoint override (DynamoDB Local); absent in AWS. */
  dynamoEndpoint?: string;
  /** Newest events per session that replay serves (advertised as `replay.buffer`). */
  replayBuffer: number;
  /**
   * How long a replay waits for fan-out to release what the session held when it began
   * (replay serves nothing above an emitter's release point, `subscribe/session-replay.ts`). Past it, the replay goes
   * without those: a live subscription gets them live, a `live=0` read on its next read.
   */
  replaySettleMs: number;
  retentionDays: number;
  /** Lifetime of live-only items: agent-scoped events and redelivery markers. */
  liveOnlySeconds: number;
  limits: RelayLimits;
  /** API Gateway Management API endpoint (execute-api stage URL) for posting to WebSocket clients. */
  managementEndpoint?: string;
  /**
   * The queue that hands near connection deadlines to the function that closes them
   * (`functions/deadline`, src/gateway/queued-deadlines.ts); absent, the process keeps the
   * deadline itself (the local stack).
   */
  deadlineQueueUrl?: string;
  /**
   * The lane worker function (`functions/fanoutlane`) fan-out invokes for the lanes of a batch
   * past `fanout.laneDeliveries` (`fanout/delivery-lanes.ts`); absent, every delivery stays in
   * the fan-out invocation. With `laneEndpoint` (the local stack's worker processes), the
   * Lambda API endpoint it is invoked at.
   */
  laneFunction?: string;
  laneEndpoint?: string;
  /**
   * How long after API Gateway received a frame the relay waits for the connection's hello
   * before answering `hello-required` (a hello-first client's hello may be invoked late).
   */
  helloWaitMs: number;
  /** Connection state lifetime: API Gateway's 2 h connection limit plus a margin. */
  connectionLifetimeSeconds: number;
  /** Bytes fan-out may park on a subscription while its replay runs. */
  maxPendingBytes: number;
  sse: SseSettings;
  fanout: FanoutSettings;
  /** `AEP_OPERATOR_TENANT`: the tenant whose admin tokens manage tenants (default `operator`). */
  operatorTenant: string;
  /** Which bindings this deployment serves (AEP_SURFACE_STREAM / AEP_SURFACE_SOCKET = on), so discovery only advertises what exists. */
  surface: { stream: boolean; socket: boolean };
  /** AEP-0005 bridges: secret sealing, allowed EventBridge buses, retry budget. */
  bridges: BridgeConfig;
  /** Web Push for attention requests: the VAPID seeds and subject, and where notifications lead. */
  push: PushConfig;
  /** CloudWatch namespace of the handlers' embedded metrics: `AepRelay/{stage}` when deployed, so stages in one account share no series. */
  metricsNamespace: string;
  /**
   * Values of the origin header (`ORIGIN_VERIFY_HEADER`) the edge adds to every request it sends
   * to the HTTP and WebSocket APIs; a request without one of them is refused before anything else
   * runs (`origin-guard.ts`). Empty: no check (a handler run without an edge in front, in tests).
   * More than one only while a rotation switches values.
   */
  originSecrets: readonly string[];
}

export interface SseSettings {
  /** Heartbeat comment interval (AEP-0003 §3.3.4: at least every 30 s). */
  heartbeatMs: number;
  /** How often a live stream reads its inbox while deliveries come (the base rate of `poll-backoff.ts`). */
  pollMs: number;
  /**
   * The longest wait between inbox reads, reached by an idle stream backing off (`poll-backoff.ts`);
   * at or below `pollMs`, no backoff. The first event after a quiet period waits at most this
   * minus `pollMs` longer than at the base rate.
   */
  idlePollMs: number;
  /** Empty inbox reads in a row at the base rate before the wait starts doubling. */
  backoffAfterPolls: number;
  /** The stream ends cleanly this long before the function's time runs out. */
  endMarginMs: number;
  /** Upper bound on one stream's duration, below Lambda's 15 minutes. */
  maxDurationMs: number;
  /**
   * When > 0, a comment of this many bytes follows a burst of writes once the stream goes
   * idle, to push small writes through buffering between Lambda and the client (see docs/sse.md "Flushing").
   */
  flushPaddingBytes: number;
  /** Unsent bytes above which the client counts as slow (AEP-0003 §8.4). */
  backpressureBytes: number;
  /** How often a live stream re-checks that its token is still valid (revocation bound). */
  revalidateMs: number;
  /**
   * How long a live stream's connection slot lasts unless the stream renews it (it does, every
   * third of this): a stream killed before its cleanup frees its slot within this time.
   */
  slotLeaseMs: number;
  /**
   * Live streams the deployment serves at once (0: no cap; deployed: `-c liveStreams`). A stream
   * over it is refused by the relay (503, Retry-After), so streams leave the rest of the account's
   * concurrency to the other functions; with a reservation on the stream function it is set below
   * that, so the refusal runs rather than Lambda's throttle. Every stream counts, replay-only ones
   * too: each holds an instance of the stream function while it runs.
   */
  maxLiveStreams: number;
  /**
   * Streams one tenant may hold at once out of `maxLiveStreams` (0: no share), taken before
   * the pool, so a tenant at its share never takes the other tenants' slots. Absent, a
   * quarter of the pool (rounded up).
   */
  maxStreamsPerTenant: number;
  /**
   * A live stream that delivered nothing for this long ends cleanly (0: never). Lambda does not
   * tell a streaming function that its client left, so this bounds what an abandoned stream
   * (a closed tab) costs; a client still there reconnects by itself (EventSource does).
   */
  idleEndMs: number;
}

export interface FanoutSettings {
  /**
   * Posts one fan-out invocation keeps in flight, over all connections (each connection's own
   * deliveries still go one at a time, in order). Throughput is about this many posts per
   * PostToConnection round trip, until the function's CPU is the limit.
   */
  concurrency: number;
  /**
   * After deciding to disconnect a consumer that could not take a `notice`-or-above event, how
   * long later batches keep trying to hand it the `closing` frame before closing without it.
   */
  closingGraceMs: number;
  /**
   * How long fan-out holds a session's event for the positions missing below it (AEP-0001 §7:
   * gaps are legal, so the wait is bounded), counted from when that event was stored. API
   * Gateway runs a connection's frames concurrently, so pipelined events can be stored out of
   * order; this is the reordering live delivery absorbs (`order/emitter-order.ts`). It delays
   * only the gapped session, never the rest of the batch.
   */
  orderWaitMs: number;
  /**
   * After this long, an event the log holds whose stream record never reached fan-out (the
   * event source mapping discarded it, or was created after it) is released from the log.
   */
  orderAdoptMs: number;
  /**
   * Deliveries (posts, SSE inbox writes, parked replays) one tenant may have in one fan-out
   * batch. The batch is shared by every tenant whose sessions hash to its stream shard, and the
   * next batch waits for it, so this bounds what one tenant's burst (many sessions, many
   * subscribers) holds the others: at most this many posts per noisy tenant, spread over
   * `concurrency` posts in flight. Past it the tenant's remaining deliveries of the batch are
   * treated as toward a consumer that cannot take more (AEP-0003 §8.4: `debug`/`info` dropped,
   * `notice`-and-above disconnected with their positions, so the consumer resumes exactly).
   */
  tenantDeliveriesPerBatch: number;
  /**
   * Planned actions one delivery lane takes before a batch is split into another lane: at 256
   * posts in flight and about 20 ms a post, 2,000 posts are about 0.16 s of network wait, and
   * at the bench's CPU per delivery about 0.4 s of a 512 MB function (`delivery-lanes.ts`).
   */
  laneDeliveries: number;
  /** Lanes one batch is split into at most (1: all in the fan-out invocation). Needs `laneFunction`. */
  maxLanes: number;
}

/**
 * A tenant's deliveries per fan-out batch: at 256 posts in flight and about 20 ms a post, 5,000
 * posts are 0.4 s of a batch, the most one noisy tenant holds the shard's others per batch.
 */
export const DEFAULT_FANOUT_TENANT_DELIVERIES = 5_000;
/** See `FanoutSettings.laneDeliveries`. */
export const DEFAULT_FANOUT_LANE_DELIVERIES = 2_000;
/** Up to 8 lanes a batch: about 16,000 posts in 0.4 s, eight times one invocation. */
export const DEFAULT_FANOUT_MAX_LANES = 8;

export const DEFAULT_LIMITS: RelayLimits = {
  maxBodyBytes: 1024 * 1024,
  maxBatchEvents: 1000,
  maxEventBytes: 120 * 1024,
  maxFromPositions: 256,
  maxSubscriptionsPerConnection: 32,
  // The local stack and the bench ingest faster than a hosted tenant's default; the CDK stack
  // ships `DEFAULT_TENANT_EVENTS_PER_SECOND` (infra/relay-settings.ts).
  defaultEventsPerSecond: 0,
  socketFramesPerSecond: 100,
  socketFrameBurst: 500,
};

/** Stream share of one tenant when none is set: a quarter of the pool, so four tenants at their worst still leave none refused. */
export function defaultStreamsPerTenant(maxLiveStreams: number): number {
  return Math.ceil(maxLiveStreams / 4);
}

/**
 * The hello wait, measured from API Gateway's receive time of the waiting frame. A client whose
 * first frame is not hello must hear `hello-required` within 2 s (checkers and clients give up
 * soon after); a hello-first client must never be refused because its hello's own invocation
 * started late (a Lambda cold start is 0.3 to 1.5 s). 1750 ms covers a hello invoked up to
 * about 1.7 s after it was received, and leaves about 250 ms to record the refusal, send the
 * `error` and `closing` frames and close, inside the 2 s.
 */
export const DEFAULT_HELLO_WAIT_MS = 1750;
/** Newest events per session replay serves, and days an event stays in the log: the functions' defaults and the CDK stack's. */
export const DEFAULT_REPLAY_BUFFER = 1000;
export const DEFAULT_RETENTION_DAYS = 30;

export function readRelayConfig(env: Environment): RelayConfig {
  const dynamoEndpoint = optionalString(env, RELAY_VARIABLES.dynamoEndpoint);
  const managementEndpoint = optionalString(env, RELAY_VARIABLES.managementEndpoint);
  const deadlineQueueUrl = optionalString(env, RELAY_VARIABLES.deadlineQueueUrl);
  const laneFunction = optionalString(env, RELAY_VARIABLES.laneFunction);
  const laneEndpoint = optionalString(env, RELAY_VARIABLES.laneEndpoint);
  const maxLiveStreams = nonNegativeInteger(env, SSE_VARIABLES.maxLiveStreams, 0);
  return {
    region: optionalString(env, RELAY_VARIABLES.region) ?? 'us-east-1',
    tables: {
      events: requiredString(env, RELAY_VARIABLES.eventsTable),
      connections: requiredString(env, RELAY_VARIABLES.connectionsTable),
      tenants: requiredString(env, RELAY_VARIABLES.tenantsTable),
    },
    ...(dynamoEndpoint === undefined ? {} : { dynamoEndpoint }),
    ...(managementEndpoint === undefined ? {} : { managementEndpoint }),
    ...(deadlineQueueUrl === undefined ? {} : { deadlineQueueUrl }),
    ...(laneFunction === undefined ? {} : { laneFunction }),
    ...(laneEndpoint === undefined ? {} : { laneEndpoint }),
    helloWaitMs: positiveInteger(env, RELAY_VARIABLES.helloWaitMs, DEFAULT_HELLO_WAIT_MS),
    connectionLifetimeSeconds: positiveInteger(env, RELAY_VARIABLES.connectionLifetimeSeconds, 2 * 3600 + 600),
    maxPendingBytes: positiveInteger(env, RELAY_VARIABLES.maxPendingBytes, 256 * 1024),
    replayBuffer: positiveInteger(env, RELAY_VARIABLES.replayBuffer, DEFAULT_REPLAY_BUFFER),
    replaySettleMs: nonNegativeInteger(env, RELAY_VARIABLES.replaySettleMs, 2000),
    retentionDays: positiveInteger(env, RELAY_VARIABLES.retentionDays, DEFAULT_RETENTION_DAYS),
    liveOnlySeconds: positiveInteger(env, RELAY_VARIABLES.liveOnlySeconds, 3600),
    limits: {
      maxBodyBytes: positiveInteger(env, LIMIT_VARIABLES.maxBodyBytes, DEFAULT_LIMITS.maxBodyBytes),
      maxBatchEvents: positiveInteger(env, LIMIT_VARIABLES.maxBatchEvents, DEFAULT_LIMITS.maxBatchEvents),
      maxEventBytes: positiveInteger(env, LIMIT_VARIABLES.maxEventBytes, DEFAULT_LIMITS.maxEventBytes),
      maxFromPositions: positiveInteger(env, LIMIT_VARIABLES.maxFromPositions, DEFAULT_LIMITS.maxFromPositions),
      maxSubscriptionsPerConnection: positiveInteger(env, LIMIT_VARIABLES.maxSubscriptionsPerConnection, DEFAULT_LIMITS.maxSubscriptionsPerConnection),
      defaultEventsPerSecond: nonNegativeInteger(env, LIMIT_VARIABLES.defaultEventsPerSecond, DEFAULT_LIMITS.defaultEventsPerSecond),
      socketFramesPerSecond: nonNegativeInteger(env, LIMIT_VARIABLES.socketFramesPerSecond, DEFAULT_LIMITS.socketFramesPerSecond),
      socketFrameBurst: positiveInteger(env, LIMIT_VARIABLES.socketFrameBurst, DEFAULT_LIMITS.socketFrameBurst),
    },
    sse: {
      heartbeatMs: positiveInteger(env, SSE_VARIABLES.heartbeatMs, 15_000),
      pollMs: positiveInteger(env, SSE_VARIABLES.pollMs, 100),
      idlePollMs: positiveInteger(env, SSE_VARIABLES.idlePollMs, 2_000),
      backoffAfterPolls: nonNegativeInteger(env, SSE_VARIABLES.backoffAfterPolls, 8),
      endMarginMs: positiveInteger(env, SSE_VARIABLES.endMarginMs, 10_000),
      maxDurationMs: positiveInteger(env, SSE_VARIABLES.maxDurationMs, 14 * 60_000),
      flushPaddingBytes: nonNegativeInteger(env, SSE_VARIABLES.flushPaddingBytes, 0),
      backpressureBytes: positiveInteger(env, SSE_VARIABLES.backpressureBytes, 1024 * 1024),
      revalidateMs: positiveInteger(env, SSE_VARIABLES.revalidateMs, 30_000),
      slotLeaseMs: positiveInteger(env, SSE_VARIABLES.slotLeaseMs, 120_000),
      maxLiveStreams,
      maxStreamsPerTenant: nonNegativeInteger(env, SSE_VARIABLES.maxStreamsPerTenant, defaultStreamsPerTenant(maxLiveStreams)),
      idleEndMs: nonNegativeInteger(env, SSE_VARIABLES.idleEndMs, 5 * 60_000),
    },
    fanout: {
      concurrency: positiveInteger(env, FANOUT_VARIABLES.concurrency, 256),
      closingGraceMs: positiveInteger(env, FANOUT_VARIABLES.closingGraceMs, 10_000),
      orderWaitMs: nonNegativeInteger(env, FANOUT_VARIABLES.orderWaitMs, 500),
      orderAdoptMs: positiveInteger(env, FANOUT_VARIABLES.orderAdoptMs, 10_000),
      tenantDeliveriesPerBatch: positiveInteger(env, FANOUT_VARIABLES.tenantDeliveriesPerBatch, DEFAULT_FANOUT_TENANT_DELIVERIES),
      laneDeliveries: positiveInteger(env, FANOUT_VARIABLES.laneDeliveries, DEFAULT_FANOUT_LANE_DELIVERIES),
      maxLanes: positiveInteger(env, FANOUT_VARIABLES.maxLanes, DEFAULT_FANOUT_MAX_LANES),
    },
    operatorTenant: operatorTenantOf(env),
    surface: {
      stream: optionalString(env, RELAY_VARIABLES.surfaceStream) === SURFACE_ON,
      socket: optionalString(env, RELAY_VARIABLES.surfaceSocket) === SURFACE_ON,
    },
    bridges: readBridgeConfig(env),
    push: readPushConfig(env),
    metricsNamespace: optionalString(env, RELAY_VARIABLES.metricsNamespace) ?? DEFAULT_METRICS_NAMESPACE,
    originSecrets: (optionalString(env, RELAY_VARIABLES.originSecrets) ?? '').split(',').map((value) => value.trim()).filter((value) => value !== ''),
  };
}

/** The namespace of the relay's own metrics where no stage scopes it (the local stack). */
export const DEFAULT_METRICS_NAMESPACE = 'AepRelay';

function operatorTenantOf(env: Environment): string {
  const tenant = optionalString(env, RELAY_VARIABLES.operatorTenant) ?? 'operator';
  if (!isTenantId(tenant)) throw new ConfigurationError(`environment variable ${RELAY_VARIABLES.operatorTenant} must be a tenant id ([a-z0-9-]), got ${JSON.stringify(tenant)}`);
  return tenant;
}
