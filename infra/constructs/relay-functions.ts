/**
 * The relay's Lambda functions, one per handler under `functions/`, all alike where it
 * matters: Node 22 on arm64, the esbuild bundle from infra/bundle.ts, structured JSON logs
 * into a log group with retention, the relay configuration in the environment, and a role
 * of their own that starts with nothing but its log group (table access is granted by the
 * stack, per function).
 */
import { Duration } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, Code, Function as LambdaFunction, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BRIDGES_TIMEOUT_SECONDS, DEADLINE_TIMEOUT_SECONDS, FANOUT_LANE_TIMEOUT_SECONDS, FANOUT_TIMEOUT_SECONDS, SINK_RETRY_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { RELAY_VARIABLES, relayEnvironment } from '../../src/config/relay-environment.ts';
import type { TableNames } from '../../src/store/table-definitions.ts';
import { BUNDLE_HANDLER, FUNCTION_NAMES } from '../bundle.ts';
import type { FunctionName } from '../bundle.ts';
import type { RelayLogLevel, TenantLimits } from '../relay-settings.ts';
import { STREAM_MEMORY_MB } from './stream-memory.ts';
import type { ConnectionManager, ManagementVerb } from './websocket-api.ts';

/**
 * The runtime the bundles target (`target: 'node22'` in infra/bundle.ts) and the project's
 * pinned development Node (docs/development.md "Node.js version"): deployed, built and tested on one major.
 */
export const RELAY_RUNTIME = Runtime.NODEJS_22_X;

/** The variable `readRelayConfig` reads the Management API endpoint from (src/config/relay-environment.ts). */
export const MANAGEMENT_ENDPOINT_VARIABLE = RELAY_VARIABLES.managementEndpoint;

interface FunctionShape {
  description: string;
  memorySize: number;
  timeout: Duration;
}

/** Sizing per function, and why. */
const SHAPES: Record<FunctionName, FunctionShape> = {
  // HTTP API integrations time out at 30 s; the function gives up first so the client gets the relay's own error.
  http: { description: 'AEP relay: HTTP API (POST/GET /events, discovery, healthz, admin)', memorySize: 512, timeout: Duration.seconds(28) },
  // One token lookup per $connect.
  authorizer: { description: 'AEP relay: WebSocket $connect authorizer', memorySize: 256, timeout: Duration.seconds(10) },
  // WebSocket integrations time out at 29 s.
  socket: { description: 'AEP relay: WebSocket routes ($connect, $default, $disconnect)', memorySize: 512, timeout: Duration.seconds(28) },
  // A stream batch posts to every matching connection; bounded well below the stream's 24 h retention.
  fanout: { description: 'AEP relay: event log stream fan-out', memorySize: 512, timeout: Duration.seconds(FANOUT_TIMEOUT_SECONDS) },
  // A delivery lane of a big batch (infra/constructs/delivery-lanes.ts): posts, CPU-bound at
  // 512 MB. By the bench's CPU per delivery a full lane (2,000 posts) takes about 0.4 s of CPU
  // at 512 MB (0.29 vCPU; Lambda gives one vCPU at 1,769 MB) against 0.16 s of waiting on the
  // network (256 posts in flight at 20 ms). 1024 MB (0.58 vCPU) halves that to about 0.2 s, near
  // the wait, at the same cost per delivery (twice the memory for half the time); past it the
  // wait dominates and more memory costs more than it saves. The timeout leaves fan-out time to
  // run a timed-out lane again and then itself (src/config/function-timeouts.ts).
  fanoutlane: { description: 'AEP relay: fan-out delivery lane worker (invoked by fan-out for big batches)', memorySize: 1024, timeout: Duration.seconds(FANOUT_LANE_TIMEOUT_SECONDS) },
  // A stream batch goes to every sink of its tenants at once, one attempt per request within
  // AEP_BRIDGE_LIVE_BUDGET_MS (the reader keeps it within half this timeout), then parks the rest.
  bridges: { description: 'AEP relay: AEP-0005 bridges (sinks fed from the event log stream)', memorySize: 512, timeout: Duration.seconds(BRIDGES_TIMEOUT_SECONDS) },
  // One attempt per letter of an SQS batch, with the full 10 s request timeout.
  sinkretry: { description: 'AEP relay: AEP-0005 bridges sink-retry worker (retry queue)', memorySize: 256, timeout: Duration.seconds(SINK_RETRY_TIMEOUT_SECONDS) },
  // An SSE stream lives as long as the invocation: Lambda's maximum, 15 minutes; its memory is
  // billed for all of it, so it is sized from the bench's measured peak (stream-memory.ts).
  stream: { description: 'AEP relay: SSE stream (function URL, response streaming)', memorySize: STREAM_MEMORY_MB, timeout: Duration.minutes(15) },
  // The minute sweep (waits at most the sweep's horizon, 2 min, mostly asleep) and the near
  // deadlines the queue delivers at their time: small (infra/constructs/deadlines.ts).
  deadline: { description: 'AEP relay: closes WebSocket connections when their token expires (minute sweep, near deadlines)', memorySize: 128, timeout: Duration.seconds(DEADLINE_TIMEOUT_SECONDS) },
};

export interface RelayFunctionsProps {
  /** Bundle folder per function, as infra/bundle.ts built them. */
  assetDirs: Readonly<Record<FunctionName, string>>;
  tables: TableNames;
  /** `AEP_REPLAY_BUFFER`: newest events per session replay serves. */
  replayBuffer: number;
  /** `AEP_RETENTION_DAYS`: how long events live before TTL removes them. */
  retentionDays: number;
  /** Lambda drops application log lines below this level (JSON format, `level` key). */
  logLevel: RelayLogLevel;
  logRetention: RetentionDays;
  /** For the log groups. */
  removalPolicy: RemovalPolicy;
  /**
   * Reserved concurrency per function, where the settings ask for one (infra/reserved-concurrency.ts);
   * a function not named reserves nothing and shares the account's unreserved executions.
   */
  reservedConcurrency: Readonly<Partial<Record<FunctionName, number>>>;
  /**
   * Streams served at once (`AEP_SSE_MAX_LIVE_STREAMS`): every SSE stream holds one execution for
   * its whole life, so the relay refuses one over this (503 with Retry-After) and the rest of the
   * account's concurrency stays for fan-out, ingest and the socket, which a fleet of dashboards
   * could otherwise throttle. Below a stream reservation, so that refusals still run.
   */
  maxLiveStreams: number;
  /** Each tenant's and each connection's share of the shared lanes: default event rate, stream share, frame budget. */
  tenantLimits: TenantLimits;
  /** `AEP_METRICS_NAMESPACE`: the stage's namespace for the handlers' embedded metrics. */
  metricsNamespace: string;
  /**
   * Lambda active tracing (X-Ray) on every function; Lambda then needs xray:PutTraceSegments and
   * xray:PutTelemetryRecords, which aws-cdk-lib adds to each role (on `*`: X-Ray has no resource-level permissions).
   */
  tracing: boolean;
}

/**
 * The Management API verbs each function calls (src/gateway/connection-poster.ts: `post` is
 * POST, `isOpen` GET, `close` DELETE), and where:
 * - socket: answers frames (POST), closes after a `closing` frame (DELETE), and at `$connect`
 *   recounts a tenant at its connection quota by asking whether the sockets holding slots
 *   still exist (GET, src/relay/connection-slots.ts `reclaimLostSlots`).
 * - fanout: delivers (POST), disconnects a consumer that cannot keep up (DELETE).
 * - fanoutlane: the same for the lanes fan-out hands it (POST, DELETE; never GET).
 * - http: its admin routes end a revoked token's sockets (POST `closing`, DELETE; src/relay/revocation.ts).
 * - deadline: ends a socket whose token expired (POST, DELETE).
 * - stream: only the slot recount (GET).
 */
export const MANAGEMENT_VERBS: Readonly<Partial<Record<FunctionName, readonly ManagementVerb[]>>> = {
  socket: ['POST', 'GET', 'DELETE'],
  fanout: ['POST', 'DELETE'],
  fanoutlane: ['POST', 'DELETE'],
  http: ['POST', 'DELETE'],
  deadline: ['POST', 'DELETE'],
  stream: ['GET'],
};

export class RelayFunctions extends Construct {
  public readonly http: LambdaFunction;
  public readonly authorizer: LambdaFunction;
  public readonly socket: LambdaFunction;
  public readonly fanout: LambdaFunction;
  public readonly stream: LambdaFunction;
  public readonly deadline: LambdaFunction;
  public readonly bridges: LambdaFunction;
  public readonly sinkretry: LambdaFunction;
  /** The delivery lane worker fan-out invokes for the extra lanes of a big batch (infra/constructs/delivery-lanes.ts). */
  public readonly fanoutlane: LambdaFunction;
  /** Each function's log group, by function. */
  public readonly logGroups: Readonly<Record<FunctionName, LogGroup>>;

  constructor(scope: Construct, id: string, props: RelayFunctionsProps) {
    super(scope, id);
    const environment = functionEnvironment(props);
    const logGroups = {} as Record<FunctionName, LogGroup>;
    const functions = {} as Record<FunctionName, LambdaFunction>;
    for (const name of FUNCTION_NAMES) {
      const construct = pascal(name);
      const logGroup = new LogGroup(this, `${construct}Logs`, { retention: props.logRetention, removalPolicy: props.removalPolicy });
      // A role per function, with no managed policy: it may write its own log group and
      // whatever the stack grants it, nothing else (the default role would carry
      // AWSLambdaBasicExecutionRole, i.e. logs:* on every log group).
      const role = new Role(this, `${construct}Role`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of the AEP relay ${name} function`,
      });
      logGroup.grantWrite(role);
      const shape = SHAPES[name];
      functions[name] = new LambdaFunction(this, construct, {
        description: shape.description,
        runtime: RELAY_RUNTIME,
        architecture: Architecture.ARM_64,
        code: Code.fromAsset(props.assetDirs[name]),
        handler: BUNDLE_HANDLER,
        memorySize: shape.memorySize,
        timeout: shape.timeout,
        role,
        logGroup,
        // The relay's logger writes one JSON object per line with a `level` key, which is
        // what Lambda's log-level filtering reads (Lambda Developer Guide, "Log-level filtering").
        loggingFormat: LoggingFormat.JSON,
        applicationLogLevelV2: APPLICATION_LEVELS[props.logLevel],
        systemLogLevelV2: SystemLogLevel.WARN,
        environment,
        ...(props.tracing ? { tracing: Tracing.ACTIVE } : {}),
        ...(props.reservedConcurrency[name] === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency[name] }),
      });
      logGroups[name] = logGroup;
    }
    this.http = functions.http;
    this.authorizer = functions.authorizer;
    this.socket = functions.socket;
    this.fanout = functions.fanout;
    this.stream = functions.stream;
    this.deadline = functions.deadline;
    this.bridges = functions.bridges;
    this.sinkretry = functions.sinkretry;
    this.fanoutlane = functions.fanoutlane;
    this.logGroups = logGroups;
  }

  get all(): readonly LambdaFunction[] {
    return [this.http, this.authorizer, this.socket, this.fanout, this.stream, this.deadline, this.bridges, this.sinkretry, this.fanoutlane];
  }

  /**
   * Tells the functions that post to or close WebSocket connections where the Management
   * API is: the execute-api stage callback URL. Never the CloudFront domain: PostToConnection
   * is an API Gateway call, signed for execute-api (DESIGN.md, "AWS facts").
   */
  useManagementEndpoint(endpoint: string): void {
    for (const manager of this.connectionManagers) manager.grantee.addEnvironment(MANAGEMENT_ENDPOINT_VARIABLE, endpoint);
  }

  /**
   * The values of the edge's origin header the functions behind the HTTP and WebSocket APIs
   * accept (`AEP_ORIGIN_SECRETS`): the http function (its origin guard) and the authorizer
   * (`$connect`). Dynamic references, resolved by CloudFormation at deploy (infra/constructs/origin-secret.ts).
   */
  useOriginSecrets(acceptedValues: readonly string[]): void {
    for (const fn of [this.http, this.authorizer]) fn.addEnvironment(RELAY_VARIABLES.originSecrets, acceptedValues.join(','));
  }

  /** The functions that post to, look up or close WebSocket connections, with the verbs each calls (`MANAGEMENT_VERBS`). */
  get connectionManagers(): readonly (ConnectionManager & { grantee: LambdaFunction })[] {
    return Object.entries(MANAGEMENT_VERBS).map(([name, verbs]) => ({ grantee: this[name as FunctionName], verbs: verbs ?? [] }));
  }
}

/** The tenant whose admin tokens operate the deployment (create and disable tenants). */
export const OPERATOR_TENANT = 'operator';

/** The relay configuration every function reads at load, written by the writer `readRelayConfig` shares its names with. */
function functionEnvironment(props: RelayFunctionsProps): Record<string, string> {
  return {
    ...relayEnvironment({
      tables: props.tables,
      replayBuffer: props.replayBuffer,
      retentionDays: props.retentionDays,
      // This stack deploys both bindings, so discovery advertises both.
      surface: { stream: true, socket: true },
      // Admin tokens of this tenant manage other tenants (tenant lifecycle routes).
      operatorTenant: OPERATOR_TENANT,
      sse: {
        // Pushes small SSE writes through buffering between Lambda and the client (docs/sse.md "Flushing").
        flushPaddingBytes: 16384,
        // A live stream's inbox poll: 4 a second, like Lambda's own stream polling.
        pollMs: 250,
        maxLiveStreams: props.maxLiveStreams,
        maxStreamsPerTenant: props.tenantLimits.streamsPerTenant,
      },
      limits: {
        defaultEventsPerSecond: props.tenantLimits.eventsPerSecond,
        socketFramesPerSecond: props.tenantLimits.socketFramesPerSecond,
        socketFrameBurst: props.tenantLimits.socketFrameBurst,
      },
      fanout: { tenantDeliveriesPerBatch: props.tenantLimits.fanoutTenantDeliveries },
      metricsNamespace: props.metricsNamespace,
    }),
    // Stack traces point into the TypeScript sources through the bundle's .map file.
    NODE_OPTIONS: '--enable-source-maps',
  };
}

const APPLICATION_LEVELS: Record<RelayLogLevel, ApplicationLogLevel> = {
  debug: ApplicationLogLevel.DEBUG,
  info: ApplicationLogLevel.INFO,
  warn: ApplicationLogLevel.WARN,
  error: ApplicationLogLevel.ERROR,
};

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
