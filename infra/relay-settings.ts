/**
 * A deployment's settings, read from CDK context (`cdk deploy -c stage=prod -c replayBuffer=1000 …`)
 * with defaults. Each reader fails naming the context key, so a typo stops the synth instead of
 * deploying a default.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { DEFAULT_FANOUT_LANE_DELIVERIES, DEFAULT_FANOUT_MAX_LANES, DEFAULT_FANOUT_TENANT_DELIVERIES, DEFAULT_LIMITS, DEFAULT_REPLAY_BUFFER, DEFAULT_RETENTION_DAYS, defaultStreamsPerTenant } from '../src/config/relay-config.ts';
import { parseCorsOrigins } from './constructs/cors-rules.ts';

export type RelayLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface RelaySettings {
  /** Deployment name (`dev`, `prod`): the stack name suffix and the WebSocket API stage name. */
  stage: string;
  /** Newest events per session that replay serves (`AEP_REPLAY_BUFFER`). */
  replayBuffer: number;
  /** Days an event stays in the log before TTL removes it (`AEP_RETENTION_DAYS`). */
  retentionDays: number;
  /** Lambda application log level (Lambda drops JSON lines below it). */
  logLevel: RelayLogLevel;
  /** How long CloudWatch keeps function and access logs. */
  logRetention: RetentionDays;
  /**
   * What happens to the tables, log groups, the sink-secrets key and the buckets when the stack
   * (or the resource) goes (`-c removalPolicy=retain|destroy`). `retain` is CloudFormation's
   * `RetainExceptOnCreate` (CDK `RETAIN_ON_UPDATE_OR_DELETE`): kept on an update or a delete,
   * but deleted when the deploy that created them rolls back, so a failed first deploy leaves
   * nothing behind (CloudFormation User Guide, "DeletionPolicy attribute").
   */
  removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection on every table. */
  deletionProtection: boolean;
  /** Custom domain for the CloudFront distribution; needs `certificateArn` (a us-east-1 ACM certificate). */
  domainName?: string;
  certificateArn?: string;
  /** An SNS topic of your own that alarms notify (ALARM and OK); without it the stack creates one (`AlarmTopicArn` output). */
  alarmTopicArn?: string;
  /** An e-mail address subscribed to the alarm topic (`-c alarmEmail=ops@example.com`); SNS mails a confirmation link first. */
  alarmEmail?: string;
  /** Lambda active tracing (X-Ray) on every function (`-c tracing=true`); off by default (X-Ray bills per trace). */
  tracing: boolean;
  /**
   * CloudFront standard logging (v2) into a CloudWatch log group (`-c edgeAccessLogs=false` turns it
   * off). CloudFront's log delivery API exists in us-east-1 only, so the delivery is created only
   * where the stack is deployed in us-east-1 (infra/constructs/edge-access-logs.ts).
   */
  edgeAccessLogs: boolean;
  /**
   * During a rotation of the origin secret (docs/deploy-and-upgrade.md "Rotating the origin secret"): the functions
   * also accept the secret's AWSPREVIOUS version while CloudFront switches to the new one
   * (`-c originSecretRotation=true`, for the one deploy between the rotation and the next).
   */
  originSecretRotation: boolean;
  /**
   * During a rotation of the VAPID seed (docs/web-push.md): the functions keep the previous key
   * too (`-c vapidRotation=true`, for the deploy right after the `put-secret-value`).
   */
  vapidRotation: boolean;
  /** The VAPID contact push services may write to (`-c pushContact=mailto:ops@example.com`). */
  pushContact?: string;
  /** A WAFv2 web ACL (scope CLOUDFRONT, ARN) to attach to the distribution. */
  webAclArn?: string;
  /**
   * Origins browsers may call the relay from (`-c corsOrigins=https://a.example,https://b.example`,
   * or `*`): CORS on the HTTP API and on the stream function URL. Empty: no CORS at all.
   */
  corsOrigins: readonly string[];
  /**
   * Reserved concurrency of the stream function (`-c streamConcurrency=200`); 0, the default: no
   * reservation. A reservation is taken from the account's concurrent executions and must leave
   * 100 of them unreserved, which a new account, whose quota starts reduced, cannot: the function
   * would fail to create and the stack roll back (`npm run preflight` says what to raise).
   */
  streamConcurrency: number;
  /** Of a reservation, executions never given to live streams (`-c streamHeadroom=20`), so refusals still run. */
  streamHeadroom: number;
  /**
   * Streams the relay serves at once, live and replay-only (`-c liveStreams=180`,
   * `AEP_SSE_MAX_LIVE_STREAMS`): past it a stream gets 503 with Retry-After. With a reservation,
   * at most `streamConcurrency - streamHeadroom` and that by default; without one, 180.
   */
  liveStreams: number;
  /**
   * Reserve the sink-retry function's concurrency (`-c reserveSinkRetryConcurrency=true`), the
   * retry mapping's maximum concurrency (5). Off by default: the reservation has the same
   * 100-unreserved rule as the stream function's, and the mapping's maximum bounds the worker anyway.
   */
  reserveSinkRetryConcurrency: boolean;
  /**
   * Access logs on the WebSocket stage. Off by default: unlike HTTP APIs, WebSocket (and REST)
   * APIs log through the account-wide API Gateway CloudWatch role, and the stage fails to
   * deploy ("CloudWatch Logs role ARN must be set in account settings") where none is set.
   */
  webSocketAccessLogs: boolean;
  /** EventBridge bus ARNs tenants may send bridge events to (`events:PutEvents` is granted on these only). */
  bridgeEventBuses: string[];
  /**
   * Stage throttling, requests per second and burst, deployment-wide (API Gateway's own
   * default is only the account's 10,000 rps shared by every API in the region): the HTTP API
   * (`-c httpRateLimit=1000 -c httpBurstLimit=2000`), WebSocket messages on `$default`
   * (`socketRateLimit`, `socketBurstLimit`), and WebSocket handshakes on `$connect`
   * (`connectRateLimit`, `connectBurstLimit`), each of which costs an authorizer run and a token read.
   */
  throttling: StageThrottling;
  /** What one tenant or one connection may take of the shared lanes (docs/security-and-isolation.md "Tenant isolation"). */
  tenantLimits: TenantLimits;
  /** How a big fan-out batch is split over lane workers (infra/constructs/delivery-lanes.ts). */
  deliveryLanes: DeliveryLaneSettings;
}

export interface DeliveryLaneSettings {
  /**
   * Lanes one fan-out batch is split into at most (`-c fanoutLanes=8`, `AEP_FANOUT_MAX_LANES`):
   * the fan-out invocation and up to this less one lane workers post it at once. 1 keeps every
   * delivery in the fan-out invocation, which may then not invoke the worker.
   */
  maxLanes: number;
  /** Planned deliveries one lane takes before the batch is split into another (`-c fanoutLaneDeliveries=2000`, `AEP_FANOUT_LANE_DELIVERIES`). */
  laneDeliveries: number;
}

export interface TenantLimits {
  /**
   * Events per second a tenant is admitted unless its quotas set `eventsPerSecond`
   * (`-c tenantEventsPerSecond=1000`, `AEP_DEFAULT_EVENTS_PER_SECOND`).
   */
  eventsPerSecond: number;
  /**
   * Streams one tenant may hold out of the stream pool (`-c streamsPerTenant=45`,
   * `AEP_SSE_MAX_STREAMS_PER_TENANT`); by default a quarter of the pool, rounded up.
   */
  streamsPerTenant: number;
  /** Frames per second one WebSocket connection may send (`-c socketFramesPerSecond=100`, `AEP_SOCKET_FRAMES_PER_SECOND`). */
  socketFramesPerSecond: number;
  /** Frames a connection may send at once before that rate applies (`-c socketFrameBurst=500`, `AEP_SOCKET_FRAME_BURST`). */
  socketFrameBurst: number;
  /**
   * Deliveries one tenant may have in one fan-out batch, which every tenant on the shard shares
   * (`-c fanoutTenantDeliveries=5000`, `AEP_FANOUT_TENANT_DELIVERIES`).
   */
  fanoutTenantDeliveries: number;
}

/** Streams served at once when the stream function has no reservation. */
export const DEFAULT_LIVE_STREAMS = 180;

/** What a hosted tenant is admitted by default: the HTTP stage's own 1,000 requests per second, counted in events. */
export const DEFAULT_TENANT_EVENTS_PER_SECOND = 1000;

export interface StageThrottling {
  http: ThrottleLimit;
  socketMessages: ThrottleLimit;
  socketConnects: ThrottleLimit;
}

export interface ThrottleLimit {
  rateLimit: number;
  burstLimit: number;
}

export const DEFAULT_SETTINGS: RelaySettings = {
  stage: 'dev',
  replayBuffer: DEFAULT_REPLAY_BUFFER,
  retentionDays: DEFAULT_RETENTION_DAYS,
  logLevel: 'info',
  logRetention: RetentionDays.ONE_MONTH,
  removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
  deletionProtection: true,
  webSocketAccessLogs: false,
  tracing: false,
  edgeAccessLogs: true,
  originSecretRotation: false,
  vapidRotation: false,
  bridgeEventBuses: [],
  corsOrigins: [],
  streamConcurrency: 0,
  streamHeadroom: 20,
  liveStreams: DEFAULT_LIVE_STREAMS,
  reserveSinkRetryConcurrency: false,
  throttling: {
    http: { rateLimit: 1000, burstLimit: 2000 },
    socketMessages: { rateLimit: 1000, burstLimit: 2000 },
    socketConnects: { rateLimit: 100, burstLimit: 200 },
  },
  tenantLimits: {
    eventsPerSecond: DEFAULT_TENANT_EVENTS_PER_SECOND,
    // A quarter of the default pool.
    streamsPerTenant: defaultStreamsPerTenant(DEFAULT_LIVE_STREAMS),
    socketFramesPerSecond: DEFAULT_LIMITS.socketFramesPerSecond,
    socketFrameBurst: DEFAULT_LIMITS.socketFrameBurst,
    fanoutTenantDeliveries: DEFAULT_FANOUT_TENANT_DELIVERIES,
  },
  deliveryLanes: { maxLanes: DEFAULT_FANOUT_MAX_LANES, laneDeliveries: DEFAULT_FANOUT_LANE_DELIVERIES },
};

/**
 * Stage names: the stack is `AepRelay-{stage}`, and CloudFormation (so CDK, at synth) takes stack
 * names of letters, digits and hyphens only, up to 128 characters; 64 keeps the WebSocket stage
 * path and the names derived from the stack short.
 */
export const STAGE_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

/** The stack a stage deploys as (infra/app.ts). */
export function stackNameOf(stage: string): string {
  return `AepRelay-${stage}`;
}

/** Reads every setting from the app's context (`-c key=value` or `cdk.json` `context`). */
export function settingsFromContext(node: Node): RelaySettings {
  const read = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    return String(value);
  };
  const removalPolicy = oneOf(read('removalPolicy'), 'removalPolicy', { retain: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, destroy: RemovalPolicy.DESTROY }, DEFAULT_SETTINGS.removalPolicy);
  // Protection on by default only where the data is kept anyway: a `destroy` stack with protected tables cannot be deleted.
  const deletionProtection = flag(read('deletionProtection'), 'deletionProtection', removalPolicy !== RemovalPolicy.DESTROY);
  if (deletionProtection && removalPolicy === RemovalPolicy.DESTROY) {
    throw new Error('context deletionProtection=true contradicts removalPolicy=destroy: the stack could never delete its tables');
  }
  const domainName = read('domainName');
  const certificateArn = read('certificateArn');
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new Error('context domainName and certificateArn go together: CloudFront serves a custom domain only with its ACM certificate (in us-east-1)');
  }
  if (certificateArn !== undefined && !/^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[A-Za-z0-9-]+$/.test(certificateArn)) {
    throw new Error(`context certificateArn must be an ACM certificate in us-east-1 (CloudFront takes its certificates from there), got ${JSON.stringify(certificateArn)}`);
  }
  const stage = read('stage') ?? DEFAULT_SETTINGS.stage;
  // The stage names the stack (`AepRelay-{stage}`: CloudFormation stack names are letters, digits
  // and hyphens) and the WebSocket stage, the URL path segment /{stage}.
  if (!STAGE_PATTERN.test(stage)) throw new Error(`context stage must be letters, digits or - (1-64; no _, which a CloudFormation stack name cannot hold), got ${JSON.stringify(stage)}`);
  const streamConcurrency = nonNegativeInteger(read('streamConcurrency'), 'streamConcurrency', DEFAULT_SETTINGS.streamConcurrency);
  const streamHeadroom = positiveInteger(read('streamHeadroom'), 'streamHeadroom', DEFAULT_SETTINGS.streamHeadroom);
  if (streamConcurrency > 0 && streamHeadroom >= streamConcurrency) throw new Error(`context streamHeadroom (${streamHeadroom}) must be below streamConcurrency (${streamConcurrency})`);
  const reservedPool = streamConcurrency - streamHeadroom;
  const liveStreams = positiveInteger(read('liveStreams'), 'liveStreams', streamConcurrency > 0 ? reservedPool : DEFAULT_LIVE_STREAMS);
  if (streamConcurrency > 0 && liveStreams > reservedPool) {
    throw new Error(`context liveStreams (${liveStreams}) must be at most streamConcurrency less streamHeadroom (${reservedPool}): Lambda would throttle the streams past the reservation`);
  }
  const alarmTopicArn = read('alarmTopicArn');
  const alarmEmail = read('alarmEmail');
  if (alarmEmail !== undefined && !/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(alarmEmail)) throw new Error(`context alarmEmail must be one e-mail address, got ${JSON.stringify(alarmEmail)}`);
  const webAclArn = read('webAclArn');
  const limit = (prefix: string, fallback: ThrottleLimit): ThrottleLimit => {
    const rateLimit = positiveInteger(read(`${prefix}RateLimit`), `${prefix}RateLimit`, fallback.rateLimit);
    const burstLimit = positiveInteger(read(`${prefix}BurstLimit`), `${prefix}BurstLimit`, fallback.burstLimit);
    return { rateLimit, burstLimit };
  };
  const defaults = DEFAULT_SETTINGS.throttling;
  const tenantDefaults = DEFAULT_SETTINGS.tenantLimits;
  const streamsPerTenant = positiveInteger(read('streamsPerTenant'), 'streamsPerTenant', defaultStreamsPerTenant(liveStreams));
  if (streamsPerTenant > liveStreams) throw new Error(`context streamsPerTenant (${streamsPerTenant}) must be at most the stream pool (${liveStreams})`);
  return {
    stage,
    replayBuffer: positiveInteger(read('replayBuffer'), 'replayBuffer', DEFAULT_SETTINGS.replayBuffer),
    retentionDays: positiveInteger(read('retentionDays'), 'retentionDays', DEFAULT_SETTINGS.retentionDays),
    logLevel: oneOf(read('logLevel'), 'logLevel', { debug: 'debug', info: 'info', warn: 'warn', error: 'error' } as const, DEFAULT_SETTINGS.logLevel),
    logRetention: logRetention(read('logRetentionDays')),
    removalPolicy,
    deletionProtection,
    webSocketAccessLogs: flag(read('webSocketAccessLogs'), 'webSocketAccessLogs', DEFAULT_SETTINGS.webSocketAccessLogs),
    tracing: flag(read('tracing'), 'tracing', DEFAULT_SETTINGS.tracing),
    edgeAccessLogs: flag(read('edgeAccessLogs'), 'edgeAccessLogs', DEFAULT_SETTINGS.edgeAccessLogs),
    originSecretRotation: flag(read('originSecretRotation'), 'originSecretRotation', DEFAULT_SETTINGS.originSecretRotation),
    vapidRotation: flag(read('vapidRotation'), 'vapidRotation', DEFAULT_SETTINGS.vapidRotation),
    ...pushContactOf(read('pushContact')),
    bridgeEventBuses: eventBusArns(read('bridgeEventBuses')),
    corsOrigins: parseCorsOrigins(read('corsOrigins'), 'context corsOrigins'),
    streamConcurrency,
    streamHeadroom,
    liveStreams,
    reserveSinkRetryConcurrency: flag(read('reserveSinkRetryConcurrency'), 'reserveSinkRetryConcurrency', DEFAULT_SETTINGS.reserveSinkRetryConcurrency),
    throttling: { http: limit('http', defaults.http), socketMessages: limit('socket', defaults.socketMessages), socketConnects: limit('connect', defaults.socketConnects) },
    tenantLimits: {
      eventsPerSecond: positiveInteger(read('tenantEventsPerSecond'), 'tenantEventsPerSecond', tenantDefaults.eventsPerSecond),
      streamsPerTenant,
      socketFramesPerSecond: positiveInteger(read('socketFramesPerSecond'), 'socketFramesPerSecond', tenantDefaults.socketFramesPerSecond),
      socketFrameBurst: positiveInteger(read('socketFrameBurst'), 'socketFrameBurst', tenantDefaults.socketFrameBurst),
      fanoutTenantDeliveries: positiveInteger(read('fanoutTenantDeliveries'), 'fanoutTenantDeliveries', tenantDefaults.fanoutTenantDeliveries),
    },
    deliveryLanes: {
      maxLanes: positiveInteger(read('fanoutLanes'), 'fanoutLanes', DEFAULT_SETTINGS.deliveryLanes.maxLanes),
      laneDeliveries: positiveInteger(read('fanoutLaneDeliveries'), 'fanoutLaneDeliveries', DEFAULT_SETTINGS.deliveryLanes.laneDeliveries),
    },
    ...(domainName === undefined ? {} : { domainName }),
    ...(certificateArn === undefined ? {} : { certificateArn }),
    ...(alarmTopicArn === undefined ? {} : { alarmTopicArn }),
    ...(alarmEmail === undefined ? {} : { alarmEmail }),
    ...(webAclArn === undefined ? {} : { webAclArn }),
  };
}

function positiveInteger(value: string | undefined, key: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) throw new Error(`context ${key} must be a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
}

function nonNegativeInteger(value: string | undefined, key: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`context ${key} must be 0 or a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
}

function flag(value: string | undefined, key: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
}

function oneOf<T>(value: string | undefined, key: string, choices: Readonly<Record<string, T>>, fallback: T): T {
  if (value === undefined) return fallback;
  const choice = Object.hasOwn(choices, value) ? choices[value] : undefined;
  if (choice === undefined) throw new Error(`context ${key} must be one of ${Object.keys(choices).join(', ')}, got ${JSON.stringify(value)}`);
  return choice;
}

/** CloudWatch Logs accepts only specific retention periods; RetentionDays lists them. */
function logRetention(value: string | undefined): RetentionDays {
  if (value === undefined) return DEFAULT_SETTINGS.logRetention;
  const days = Number(value);
  const allowed = Object.values(RetentionDays).filter((entry): entry is RetentionDays => typeof entry === 'number');
  const match = allowed.find((entry) => entry === days);
  if (match === undefined) throw new Error(`context logRetentionDays must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return match;
}

/** `bridgeEventBuses`: comma-separated EventBridge bus ARNs (a cross-account bus is named by its ARN). */
function eventBusArns(value: string | undefined): string[] {
  const arns = (value ?? '').split(',').map((arn) => arn.trim()).filter((arn) => arn !== '');
  for (const arn of arns) {
    if (!/^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._\-/]+$/.test(arn)) throw new Error(`context bridgeEventBuses must be EventBridge bus ARNs, got ${JSON.stringify(arn)}`);
  }
  return arns;
}

/** `-c pushContact`: a mailto: or https: URL (RFC 8292 §2.1), which web-push refuses otherwise. */
function pushContactOf(value: unknown): { pushContact?: string } {
  if (value === undefined) return {};
  if (typeof value !== 'string' || !/^(?:mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/.test(value)) throw new Error(`context pushContact must be a mailto: address or an https: URL, got ${JSON.stringify(value)}`);
  return { pushContact: value };
}
