/**
 * The relay's configuration, read once per process from the environment. Handlers receive
 * it as a value; the protocol core never reads the environment.
 */
import type { TableNames } from '../store/table-definitions.ts';
import { isTenantId } from '../store/tenant-id.ts';
import { ConfigurationError, nonNegativeInteger, optionalString, positiveInteger, requiredString } from './env-readers.ts';
import type { Environment } from './env-readers.ts';

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
}

export interface RelayConfig {
  region: string;
  tables: TableNames;
  /** DynamoDB endpoint override (DynamoDB Local); absent in AWS. */
  dynamoEndpoint?: string;
  /** Newest events per session that replay serves (advertised as `replay.buffer`). */
  replayBuffer: number;
  retentionDays: number;
  /** Lifetime of live-only items: agent-scoped events and redelivery markers. */
  liveOnlySeconds: number;
  limits: RelayLimits;
  /** API Gateway Management API endpoint (execute-api stage URL) for posting to WebSocket clients. */
  managementEndpoint?: string;
  /** How long a frame that arrived before its connection's hello waits for that hello (pipelining). */
  helloWaitMs: number;
  /** Connection state lifetime: API Gateway's 2 h connection limit plus a margin. */
  connectionLifetimeSeconds: number;
  /** Bytes fan-out may park on a subscription while its replay runs. */
  maxPendingBytes: number;
  sse: SseSettings;
  /** `AEP_OPERATOR_TENANT`: the tenant whose admin tokens manage tenants (default `operator`). */
  operatorTenant: string;
  /** Which bindings this deployment serves (AEP_SURFACE_STREAM / AEP_SURFACE_SOCKET = on), so discovery only advertises what exists. */
  surface: { stream: boolean; socket: boolean };
}

export interface SseSettings {
  /** Heartbeat comment interval (AEP-0003 §3.3.4: at least every 30 s). */
  heartbeatMs: number;
  /** How often a live stream reads its inbox. */
  pollMs: number;
  /** The stream ends cleanly this long before the function's time runs out. */
  endMarginMs: number;
  /** Upper bound on one stream's duration, below Lambda's 15 minutes. */
  maxDurationMs: number;
  /**
   * When > 0, a comment of this many bytes follows a burst of writes once the stream goes
   * idle, to push small writes through buffering between Lambda and the client (see README).
   */
  flushPaddingBytes: number;
  /** Unsent bytes above which the client counts as slow (AEP-0003 §8.4). */
  backpressureBytes: number;
  /** How often a live stream re-checks that its token is still valid (revocation bound). */
  revalidateMs: number;
}

export const DEFAULT_LIMITS: RelayLimits = {
  maxBodyBytes: 1024 * 1024,
  maxBatchEvents: 1000,
  maxEventBytes: 120 * 1024,
  maxFromPositions: 256,
  maxSubscriptionsPerConnection: 32,
};

export function readRelayConfig(env: Environment): RelayConfig {
  const dynamoEndpoint = optionalString(env, 'AEP_DYNAMODB_ENDPOINT');
  const managementEndpoint = optionalString(env, 'AEP_WS_MANAGEMENT_ENDPOINT');
  return {
    region: optionalString(env, 'AWS_REGION') ?? 'us-east-1',
    tables: {
      events: requiredString(env, 'AEP_EVENTS_TABLE'),
      connections: requiredString(env, 'AEP_CONNECTIONS_TABLE'),
      tenants: requiredString(env, 'AEP_TENANTS_TABLE'),
    },
    ...(dynamoEndpoint === undefined ? {} : { dynamoEndpoint }),
    ...(managementEndpoint === undefined ? {} : { managementEndpoint }),
    helloWaitMs: positiveInteger(env, 'AEP_HELLO_WAIT_MS', 10_000),
    connectionLifetimeSeconds: positiveInteger(env, 'AEP_CONNECTION_LIFETIME_SECONDS', 2 * 3600 + 600),
    maxPendingBytes: positiveInteger(env, 'AEP_MAX_PENDING_BYTES', 256 * 1024),
    replayBuffer: positiveInteger(env, 'AEP_REPLAY_BUFFER', 1000),
    retentionDays: positiveInteger(env, 'AEP_RETENTION_DAYS', 30),
    liveOnlySeconds: positiveInteger(env, 'AEP_LIVE_ONLY_SECONDS', 3600),
    limits: {
      maxBodyBytes: positiveInteger(env, 'AEP_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes),
      maxBatchEvents: positiveInteger(env, 'AEP_MAX_BATCH', DEFAULT_LIMITS.maxBatchEvents),
      maxEventBytes: positiveInteger(env, 'AEP_MAX_EVENT_BYTES', DEFAULT_LIMITS.maxEventBytes),
      maxFromPositions: positiveInteger(env, 'AEP_MAX_FROM', DEFAULT_LIMITS.maxFromPositions),
      maxSubscriptionsPerConnection: positiveInteger(env, 'AEP_MAX_SUBSCRIPTIONS', DEFAULT_LIMITS.maxSubscriptionsPerConnection),
    },
    sse: {
      heartbeatMs: positiveInteger(env, 'AEP_SSE_HEARTBEAT_MS', 15_000),
      pollMs: positiveInteger(env, 'AEP_SSE_POLL_MS', 100),
      endMarginMs: positiveInteger(env, 'AEP_SSE_END_MARGIN_MS', 10_000),
      maxDurationMs: positiveInteger(env, 'AEP_SSE_MAX_DURATION_MS', 14 * 60_000),
      flushPaddingBytes: nonNegativeInteger(env, 'AEP_SSE_FLUSH_PADDING_BYTES', 0),
      backpressureBytes: positiveInteger(env, 'AEP_SSE_BACKPRESSURE_BYTES', 1024 * 1024),
      revalidateMs: positiveInteger(env, 'AEP_SSE_REVALIDATE_MS', 30_000),
    },
    operatorTenant: operatorTenantOf(env),
    surface: {
      stream: optionalString(env, 'AEP_SURFACE_STREAM') === 'on',
      socket: optionalString(env, 'AEP_SURFACE_SOCKET') === 'on',
    },
  };
}

function operatorTenantOf(env: Environment): string {
  const tenant = optionalString(env, 'AEP_OPERATOR_TENANT') ?? 'operator';
  if (!isTenantId(tenant)) throw new ConfigurationError(`environment variable AEP_OPERATOR_TENANT must be a tenant id ([a-z0-9-]), got ${JSON.stringify(tenant)}`);
  return tenant;
}
