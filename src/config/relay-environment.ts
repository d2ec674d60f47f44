/**
 * The relay's environment variables, named once. `readRelayConfig` reads these names;
 * `relayEnvironment` writes them for whoever starts the handlers (the CDK functions in
 * infra/, the local stack in local/), so a renamed or new setting cannot drift between the
 * side that sets it and the side that reads it.
 */
import type { TableNames } from './table-names.ts';
import type { FanoutSettings, RelayConfig, RelayLimits, SseSettings } from './relay-config.ts';

/** Each relay setting's variable, by the name of the configuration field it fills. */
export const RELAY_VARIABLES = {
  /** Set by Lambda itself (a reserved variable); read, never written. */
  region: 'AWS_REGION',
  eventsTable: 'AEP_EVENTS_TABLE',
  connectionsTable: 'AEP_CONNECTIONS_TABLE',
  tenantsTable: 'AEP_TENANTS_TABLE',
  dynamoEndpoint: 'AEP_DYNAMODB_ENDPOINT',
  managementEndpoint: 'AEP_WS_MANAGEMENT_ENDPOINT',
  deadlineQueueUrl: 'AEP_DEADLINE_QUEUE_URL',
  laneFunction: 'AEP_FANOUT_LANE_FUNCTION',
  laneEndpoint: 'AEP_FANOUT_LANE_ENDPOINT',
  helloWaitMs: 'AEP_HELLO_WAIT_MS',
  connectionLifetimeSeconds: 'AEP_CONNECTION_LIFETIME_SECONDS',
  maxPendingBytes: 'AEP_MAX_PENDING_BYTES',
  replayBuffer: 'AEP_REPLAY_BUFFER',
  replaySettleMs: 'AEP_REPLAY_SETTLE_MS',
  retentionDays: 'AEP_RETENTION_DAYS',
  liveOnlySeconds: 'AEP_LIVE_ONLY_SECONDS',
  operatorTenant: 'AEP_OPERATOR_TENANT',
  surfaceStream: 'AEP_SURFACE_STREAM',
  surfaceSocket: 'AEP_SURFACE_SOCKET',
  metricsNamespace: 'AEP_METRICS_NAMESPACE',
  originSecrets: 'AEP_ORIGIN_SECRETS',
} as const;

/** The `limits` fields' variables. */
export const LIMIT_VARIABLES: Readonly<Record<keyof RelayLimits, string>> = {
  maxBodyBytes: 'AEP_MAX_BODY_BYTES',
  maxBatchEvents: 'AEP_MAX_BATCH',
  maxEventBytes: 'AEP_MAX_EVENT_BYTES',
  maxFromPositions: 'AEP_MAX_FROM',
  maxSubscriptionsPerConnection: 'AEP_MAX_SUBSCRIPTIONS',
  defaultEventsPerSecond: 'AEP_DEFAULT_EVENTS_PER_SECOND',
  socketFramesPerSecond: 'AEP_SOCKET_FRAMES_PER_SECOND',
  socketFrameBurst: 'AEP_SOCKET_FRAME_BURST',
};

/** The `sse` fields' variables. */
export const SSE_VARIABLES: Readonly<Record<keyof SseSettings, string>> = {
  heartbeatMs: 'AEP_SSE_HEARTBEAT_MS',
  pollMs: 'AEP_SSE_POLL_MS',
  idlePollMs: 'AEP_SSE_IDLE_POLL_MS',
  backoffAfterPolls: 'AEP_SSE_BACKOFF_AFTER_POLLS',
  endMarginMs: 'AEP_SSE_END_MARGIN_MS',
  maxDurationMs: 'AEP_SSE_MAX_DURATION_MS',
  flushPaddingBytes: 'AEP_SSE_FLUSH_PADDING_BYTES',
  backpressureBytes: 'AEP_SSE_BACKPRESSURE_BYTES',
  revalidateMs: 'AEP_SSE_REVALIDATE_MS',
  slotLeaseMs: 'AEP_SSE_SLOT_LEASE_MS',
  maxLiveStreams: 'AEP_SSE_MAX_LIVE_STREAMS',
  maxStreamsPerTenant: 'AEP_SSE_MAX_STREAMS_PER_TENANT',
  idleEndMs: 'AEP_SSE_IDLE_END_MS',
};

/** The `fanout` fields' variables. */
export const FANOUT_VARIABLES: Readonly<Record<keyof FanoutSettings, string>> = {
  concurrency: 'AEP_FANOUT_CONCURRENCY',
  closingGraceMs: 'AEP_FANOUT_CLOSING_GRACE_MS',
  orderWaitMs: 'AEP_ORDER_WAIT_MS',
  orderAdoptMs: 'AEP_ORDER_ADOPT_MS',
  tenantDeliveriesPerBatch: 'AEP_FANOUT_TENANT_DELIVERIES',
  laneDeliveries: 'AEP_FANOUT_LANE_DELIVERIES',
  maxLanes: 'AEP_FANOUT_MAX_LANES',
};
/** The bridges' variables (`bridge-config.ts`). */
export const BRIDGE_VARIABLES = {
  kmsKeyId: 'AEP_BRIDGE_KMS_KEY_ID',
  sealKey: 'AEP_BRIDGE_SEAL_KEY',
  eventBuses: 'AEP_BRIDGE_EVENT_BUSES',
  eventBridgeEndpoint: 'AEP_BRIDGE_EVENTBRIDGE_ENDPOINT',
  retryAttempts: 'AEP_BRIDGE_RETRY_ATTEMPTS',
  retryBaseDelayMs: 'AEP_BRIDGE_RETRY_BASE_MS',
  retryMaxDelayMs: 'AEP_BRIDGE_RETRY_MAX_MS',
  liveBudgetMs: 'AEP_BRIDGE_LIVE_BUDGET_MS',
  circuitOpenMs: 'AEP_BRIDGE_CIRCUIT_OPEN_MS',
  retryQueueUrl: 'AEP_BRIDGE_RETRY_QUEUE_URL',
  retryConcurrency: 'AEP_BRIDGE_RETRY_CONCURRENCY',
  retryTimeoutMs: 'AEP_BRIDGE_RETRY_TIMEOUT_MS',
  allowLoopbackSinks: 'AEP_BRIDGE_ALLOW_LOOPBACK_SINKS',
} as const;

/** Web Push's variables (`push-config.ts`). */
export const PUSH_VARIABLES = {
  /** The seed the VAPID key pair is derived from (a Secrets Manager value in AWS, a file in the local data folder). */
  vapidSeed: 'AEP_PUSH_VAPID_SEED',
  /** During a rotation: the seed before, so subscriptions made under the old key keep working until renewed. */
  vapidPreviousSeed: 'AEP_PUSH_VAPID_PREVIOUS_SEED',
  /** The VAPID `sub` claim: a mailto: or https: URL push services may contact (RFC 8292 §2.1). */
  vapidSubject: 'AEP_PUSH_VAPID_SUBJECT',
  /** The console's public URL, which notifications open (`{base}/console/`). */
  consoleUrl: 'AEP_PUSH_CONSOLE_URL',
} as const;

/** What a starter may set for Web Push. */
export interface PushEnvironmentSettings {
  vapidSeed?: string;
  vapidPreviousSeed?: string;
  vapidSubject?: string;
  consoleUrl?: string;
}

/** What a starter may set for the bridges (the sealing key is written as base64). */
export interface BridgeEnvironmentSettings {
  kmsKeyId?: string;
  sealKeyBase64?: string;
  eventBuses?: readonly string[];
  eventBridgeEndpoint?: string;
  retry?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  liveBudgetMs?: number;
  circuitOpenMs?: number;
  retryQueueUrl?: string;
  retryConcurrency?: number;
  retryTimeoutMs?: number;
  /** Only the local stack sets this: its receivers listen on loopback. */
  allowLoopbackSinks?: boolean;
}

/**
 * Settings the platform applies rather than the handlers: in AWS they are CDK context
 * (`-c corsOrigins=...`) turned into API Gateway and function URL configuration; the local
 * stack reads them from its environment and its gateway applies them.
 */
export const PLATFORM_VARIABLES = {
  /** Comma-separated origins allowed to call the relay from a browser (none by default). */
  corsOrigins: 'AEP_CORS_ORIGINS',
} as const;

/** The value a surface variable holds when its binding is served. */
export const SURFACE_ON = 'on';

/**
 * What a starter may set: the tables always, anything else only to override the reader's
 * default. The region is absent: Lambda sets `AWS_REGION` and refuses it as a function variable.
 */
export type RelayEnvironmentSettings = { tables: TableNames } & Partial<
  Pick<RelayConfig, 'dynamoEndpoint' | 'managementEndpoint' | 'deadlineQueueUrl' | 'laneFunction' | 'laneEndpoint' | 'helloWaitMs' | 'connectionLifetimeSeconds' | 'maxPendingBytes' | 'replayBuffer' | 'replaySettleMs' | 'retentionDays' | 'liveOnlySeconds' | 'operatorTenant' | 'surface' | 'metricsNamespace'>
> & {
    limits?: Partial<RelayLimits>;
    sse?: Partial<SseSettings>;
    fanout?: Partial<FanoutSettings>;
    bridges?: BridgeEnvironmentSettings;
    push?: PushEnvironmentSettings;
    /** The values of the origin header the edge adds (`originSecrets`), written comma-separated. */
    originSecrets?: readonly string[];
  };

/** The variables that make `readRelayConfig` return these settings (and its defaults for the rest). */
export function relayEnvironment(settings: RelayEnvironmentSettings): Record<string, string> {
  const variables: Record<string, string> = {
    [RELAY_VARIABLES.eventsTable]: settings.tables.events,
    [RELAY_VARIABLES.connectionsTable]: settings.tables.connections,
    [RELAY_VARIABLES.tenantsTable]: settings.tables.tenants,
  };
  const put = (name: string, value: string | number | undefined): void => {
    if (value !== undefined) variables[name] = String(value);
  };
  put(RELAY_VARIABLES.dynamoEndpoint, settings.dynamoEndpoint);
  put(RELAY_VARIABLES.managementEndpoint, settings.managementEndpoint);
  put(RELAY_VARIABLES.deadlineQueueUrl, settings.deadlineQueueUrl);
  put(RELAY_VARIABLES.laneFunction, settings.laneFunction);
  put(RELAY_VARIABLES.laneEndpoint, settings.laneEndpoint);
  put(RELAY_VARIABLES.helloWaitMs, settings.helloWaitMs);
  put(RELAY_VARIABLES.connectionLifetimeSeconds, settings.connectionLifetimeSeconds);
  put(RELAY_VARIABLES.maxPendingBytes, settings.maxPendingBytes);
  put(RELAY_VARIABLES.replayBuffer, settings.replayBuffer);
  put(RELAY_VARIABLES.replaySettleMs, settings.replaySettleMs);
  put(RELAY_VARIABLES.retentionDays, settings.retentionDays);
  put(RELAY_VARIABLES.liveOnlySeconds, settings.liveOnlySeconds);
  put(RELAY_VARIABLES.operatorTenant, settings.operatorTenant);
  put(RELAY_VARIABLES.metricsNamespace, settings.metricsNamespace);
  if (settings.originSecrets !== undefined && settings.originSecrets.length > 0) put(RELAY_VARIABLES.originSecrets, settings.originSecrets.join(','));
  if (settings.surface !== undefined) {
    put(RELAY_VARIABLES.surfaceStream, settings.surface.stream ? SURFACE_ON : 'off');
    put(RELAY_VARIABLES.surfaceSocket, settings.surface.socket ? SURFACE_ON : 'off');
  }
  for (const [field, name] of entries(LIMIT_VARIABLES)) put(name, settings.limits?.[field]);
  for (const [field, name] of entries(SSE_VARIABLES)) put(name, settings.sse?.[field]);
  for (const [field, name] of entries(FANOUT_VARIABLES)) put(name, settings.fanout?.[field]);
  const bridges = settings.bridges;
  put(BRIDGE_VARIABLES.kmsKeyId, bridges?.kmsKeyId);
  put(BRIDGE_VARIABLES.sealKey, bridges?.sealKeyBase64);
  if (bridges?.eventBuses !== undefined && bridges.eventBuses.length > 0) put(BRIDGE_VARIABLES.eventBuses, bridges.eventBuses.join(','));
  put(BRIDGE_VARIABLES.eventBridgeEndpoint, bridges?.eventBridgeEndpoint);
  put(BRIDGE_VARIABLES.retryAttempts, bridges?.retry?.attempts);
  put(BRIDGE_VARIABLES.retryBaseDelayMs, bridges?.retry?.baseDelayMs);
  put(BRIDGE_VARIABLES.retryMaxDelayMs, bridges?.retry?.maxDelayMs);
  put(BRIDGE_VARIABLES.liveBudgetMs, bridges?.liveBudgetMs);
  put(BRIDGE_VARIABLES.circuitOpenMs, bridges?.circuitOpenMs);
  put(BRIDGE_VARIABLES.retryQueueUrl, bridges?.retryQueueUrl);
  put(BRIDGE_VARIABLES.retryConcurrency, bridges?.retryConcurrency);
  put(BRIDGE_VARIABLES.retryTimeoutMs, bridges?.retryTimeoutMs);
  if (bridges?.allowLoopbackSinks !== undefined) put(BRIDGE_VARIABLES.allowLoopbackSinks, bridges.allowLoopbackSinks ? SURFACE_ON : 'off');
  put(PUSH_VARIABLES.vapidSeed, settings.push?.vapidSeed);
  put(PUSH_VARIABLES.vapidPreviousSeed, settings.push?.vapidPreviousSeed);
  put(PUSH_VARIABLES.vapidSubject, settings.push?.vapidSubject);
  put(PUSH_VARIABLES.consoleUrl, settings.push?.consoleUrl);
  return variables;
}

function entries<K extends string>(record: Readonly<Record<K, string>>): [K, string][] {
  return Object.entries(record) as [K, string][];
}
