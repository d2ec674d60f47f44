/**
 * The whole relay on one machine: DynamoDB Local, the tables from the shared definitions, a
 * `local` tenant with a dev token, the local API Gateway (HTTP routes, WebSocket API and its
 * `@connections` endpoint) invoking the same handlers the cloud runs, and the local stream
 * poller feeding the events table's stream to the fan-out handler.
 *
 * Environment knobs for the emulation (besides the relay's own AEP_* settings):
 * AEP_LOCAL_POLL_MS (stream poll interval, default 100), AEP_LOCAL_WS_JITTER_MS (upper
 * bound of the random delay before each WebSocket route invocation, default 5; 0 turns it off),
 * AEP_LOCAL_WS_HELLO_DELAY_MS (extra delay before invoking a `hello` frame, standing in for a
 * cold start of that invocation; default 0),
 * AEP_LOCAL_POST_DELAY_MS (simulated PostToConnection round trip, default 0),
 * AEP_LOCAL_STANDIN_POST_MS with AEP_LOCAL_STANDIN_POST_LOG (fan-out and lane workers post to a
 * stand-in that records delivery times, no socket involved: local/stand-in-poster.ts),
 * AEP_LOCAL_WS_BUFFER_BYTES (unsent bytes toward a client above which a post answers 429,
 * default 1 MiB) and AEP_CORS_ORIGINS (origins browsers may call from, applied by the gateway
 * as API Gateway and the function URL apply `-c corsOrigins`). In front of everything runs the
 * local edge (gateway/edge.ts), the deployed CloudFront Functions included, and it adds the
 * origin secret (fresh at every start) the HTTP handler and the authorizer require; the origin
 * listener (`originUrl`) serves the same HTTP and WebSocket APIs without the edge, as their
 * execute-api URLs are in AWS, so it is refused there.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RelayConfig } from '../src/config/relay-config.ts';
import { readRelayConfig } from '../src/config/relay-config.ts';
import { BRIDGE_VARIABLES, PLATFORM_VARIABLES, PUSH_VARIABLES, RELAY_VARIABLES, relayEnvironment } from '../src/config/relay-environment.ts';
import { startLaneWorkers } from './lane-workers.ts';
import { standInPosterFromEnv } from './stand-in-poster.ts';
import type { LaneWorkers } from './lane-workers.ts';
import { HTTP_CORS_METHODS, STREAM_CORS_METHODS, parseCorsOrigins } from '../infra/constructs/cors-rules.ts';
import { hashTokenSecret, mintTokenSecret } from '../src/auth/token-secret.ts';
import { SCOPES } from '../src/auth/scopes.ts';
import type { RelayRuntime } from '../functions/runtime/relay-runtime.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { tenantTableStores } from '../src/store/tenant-table.ts';
import type { TenantTableStores } from '../src/store/tenant-table.ts';
import { createRuntime } from '../functions/runtime/create-runtime.ts';
import { createRelayMetrics } from '../src/observability/relay-metrics.ts';
import { createTables, localTableNames } from './create-tables.ts';
import { LOCAL_STAGE } from './gateway/websocket-events.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import type { DynamoDbLocal } from './dynamodb-local.ts';
import { lockDataFolder } from './data-folder-lock.ts';
import type { DataFolderLock } from './data-folder-lock.ts';
import { CONSOLE_BUILD_DIR } from '../infra/constructs/console-site.ts';
import { serveConsoleFile } from './gateway/console-files.ts';
import { createConnectionsApi } from './gateway/connections-api.ts';
import { startGateway } from './gateway/server.ts';
import type { LocalGateway } from './gateway/server.ts';
import { createLocalEdge } from './gateway/edge.ts';
import { createWebSocketApi } from './gateway/websocket-api.ts';
import type { WebSocketApi } from './gateway/websocket-api.ts';
import { LOCAL_CREDENTIALS, useLocalCredentials } from './local-credentials.ts';
import { mintManagementCredentials, useManagementCredentials } from './management-credentials.ts';
import type { ManagementCredentials } from './management-credentials.ts';
import { startManagementListener } from './gateway/management-listener.ts';
import type { ManagementListener } from './gateway/management-listener.ts';
import type { FanoutHandler, StreamBatchFailure } from './stream-batch-delivery.ts';
import { createStreamPoller } from './stream-poller.ts';
import { STREAM_STARTING_POSITIONS } from '../src/config/stream-mappings.ts';
import { failedBatchArchive } from './failed-batch-archive.ts';
import { passesBridgeFilter } from './stream-records.ts';
import { installLambdaStreamingGlobal } from './lambda-streaming-global.ts';
import { serveStreamingFunction } from './gateway/response-streaming.ts';
import { StreamInvocations } from './gateway/stream-invocations.ts';
import type { StreamingHandler } from './gateway/response-streaming.ts';
import type { StreamPoller } from './stream-poller.ts';
import { UsageCounters } from './usage.ts';
import type { SQSRecord } from 'aws-lambda';
import { BRIDGES_TIMEOUT_SECONDS, DEADLINE_TIMEOUT_SECONDS, FANOUT_LANE_TIMEOUT_SECONDS, SINK_RETRY_TIMEOUT_SECONDS } from '../src/config/function-timeouts.ts';
import { localRetryQueue } from '../src/gateway/local-retry-queue.ts';
import type { LocalRetryQueue } from '../src/gateway/local-retry-queue.ts';
import type { SinkRetryWakeUp } from '../src/relay/ports/sink-retry-queue.ts';
import { SINK_RETRY_MAX_RECEIVES } from '../functions/runtime/create-bridges.ts';
import { lambdaContext } from './lambda-context.ts';
import { DEFAULT_LOCAL_POLL_MS } from './stream-poll-default.ts';
import { DEV_MAPPED_GROUP, startDevIdentityProvider } from './dev-identity-provider.ts';
import type { DevIdentityProvider } from './dev-identity-provider.ts';
import { IdentityProviderStore } from '../src/store/identity-provider-store.ts';
import { aesSecretSealer } from '../src/store/aes-secret-sealer.ts';
import { CLIENT_SECRET_SEAL_NAME } from '../src/auth/oidc/sign-in-service.ts';
import { parseIdentityProviderDocument } from '../src/auth/oidc/identity-provider-settings.ts';
import type { FunctionName, StackUsage } from './usage.ts';

export const LOCAL_TENANT = 'local';

export interface StackOptions {
  /** 0 picks a free port. */
  port: number;
  inMemory: boolean;
  /** Where persistent data lives (git-ignored). */
  dataDir: string;
  devToken?: string;
  /** Extra relay environment (e.g. AEP_REPLAY_BUFFER), applied before the handlers load. */
  env?: Record<string, string>;
}

export interface RunningStack {
  baseUrl: string;
  /**
   * The HTTP and WebSocket APIs without the edge in front, as their execute-api URLs are in AWS:
   * every request there lacks the edge's origin header and is refused (403).
   */
  originUrl: string;
  /** The loopback-only `@connections` endpoint (`config.managementEndpoint`). */
  managementEndpoint: string;
  /** The only credentials the management endpoint accepts; fresh at every start. */
  managementCredentials: ManagementCredentials;
  dynamoEndpoint: string;
  devToken: string;
  /** The embedded development OpenID Connect provider the local tenant signs in with (`dev-identity-provider.ts`). */
  identityProvider: { issuer: string; displayName: string; tenant: string };
  config: RelayConfig;
  /** What the fan-out mapping's on-failure destination received (each also logged as a JSON line). */
  streamFailures: StreamBatchFailure[];
  /** Handler invocations, DynamoDB request units and PostToConnection calls since the start or the last `resetUsage()`. */
  usage(): StackUsage;
  resetUsage(): void;
  /** Changes the simulated PostToConnection round trip for the posts that follow. */
  setPostDelayMs(ms: number): void;
  /** Ids of the WebSocket connections open now (the bench's stand-in post loop posts to them). */
  connectionIds(): string[];
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  // Every poster in this process signs with the stack's management credentials (env chain).
  const managementCredentials = mintManagementCredentials();
  useManagementCredentials(managementCredentials);
  useLocalCredentials();
  // What another stack may own is checked before anything is touched: the port first (held from
  // here on; routes answer 503 until the handlers are loaded), then the data folder's lock, and
  // only then DynamoDB Local, whose start ends a JVM a killed stack left on the folder.
  const gateway: LocalGateway = await startGateway({}, options.port);
  let dataFolderLock: DataFolderLock | undefined;
  let dynamo: DynamoDbLocal;
  try {
    if (!options.inMemory) dataFolderLock = lockDataFolder(options.dataDir);
    dynamo = await startDynamoDbLocal(options.inMemory ? {} : { dataDir: join(options.dataDir, 'dynamodb') });
  } catch (error) {
    dataFolderLock?.release();
    await gateway.close();
    throw error;
  }
  let origins: LocalGateway | undefined;
  let management: ManagementListener | undefined;
  let websocketApi: WebSocketApi | undefined;
  let poller: StreamPoller | undefined;
  let bridgePoller: StreamPoller | undefined;
  const streams = new StreamInvocations();
  const usage = new UsageCounters();
  let sinkRetryQueue: LocalRetryQueue | undefined;
  let deadlineSweeps: NodeJS.Timeout | undefined;
  let laneWorkers: LaneWorkers | undefined;
  let devProvider: DevIdentityProvider | undefined;
  const stopAll = async () => {
    clearInterval(deadlineSweeps);
    // Order matters: no new connections; close the sockets (1001; their $disconnect runs against a
    // live DynamoDB); end the SSE streams (each client gets the closing comment; their cleanup
    // removes their connection state and releases their slots); stop fan-out after its in-flight batch; then the server and the
    // database. Anything still talking to DynamoDB Local when it stops logs ECONNREFUSED and,
    // on a persistent data folder, leaves its connection items behind.
    gateway.stopAccepting();
    origins?.stopAccepting();
    await websocketApi?.close();
    await streams.endAll();
    await poller?.stop();
    await bridgePoller?.stop();
    await laneWorkers?.stop();
    sinkRetryQueue?.stop();
    await gateway.close();
    await origins?.close();
    await management?.close();
    await devProvider?.stop();
    await dynamo.stop();
    dataFolderLock?.release();
  };
  try {
    // The other listeners start next: the management listener's port is the @connections endpoint
    // the handlers post to (loopback only, never the public port).
    management = await startManagementListener({ accessKeyId: managementCredentials.accessKeyId });
    origins = await startGateway({}, 0);
    const baseUrl = `http://127.0.0.1:${gateway.port}`;
    const names = localTableNames('aep-local');
    // The edge's origin secret, fresh at every start (a Secrets Manager value in AWS).
    const originSecret = randomBytes(24).toString('base64url');
    Object.assign(process.env, {
      ...relayEnvironment({
        tables: names,
        dynamoEndpoint: dynamo.endpoint,
        managementEndpoint: management.endpoint,
        surface: { stream: true, socket: true },
        originSecrets: [originSecret],
        // The dev token's tenant is the operator, so `npm start` can manage tenants over HTTP.
        operatorTenant: LOCAL_TENANT,
        // Bridge sink secrets are sealed with a local key (KMS in AWS); the local receivers
        // listen on loopback, which a deployed stack refuses.
        // (A starter that set AEP_BRIDGE_ALLOW_LOOPBACK_SINKS keeps its choice: tests of the deployed rule.)
        bridges: { sealKeyBase64: localSealKey(options), ...(process.env[BRIDGE_VARIABLES.allowLoopbackSinks] === undefined ? { allowLoopbackSinks: true } : {}) },
        // The VAPID key pair of Web Push, derived from a seed made at the first start (a Secrets Manager value in AWS).
        push: { vapidSeed: localVapidSeed(options) },
      }),
      ...options.env,
    });
    // AEP_LOCAL_LANE_WORKERS=N: the lane worker function as N processes behind a local Invoke
    // endpoint, which fan-out then invokes for the lanes of a big batch (local/lane-workers.ts).
    const laneWorkerCount = nonNegativeInteger('AEP_LOCAL_LANE_WORKERS', 0);
    if (laneWorkerCount > 0) {
      const crashAfter = nonNegativeInteger('AEP_LOCAL_LANE_CRASH_AFTER_POSTS', 0);
      laneWorkers = await startLaneWorkers({
        workers: laneWorkerCount,
        timeoutMs: FANOUT_LANE_TIMEOUT_SECONDS * 1000,
        ...(crashAfter > 0 ? { crashFirstAfterPosts: crashAfter } : {}),
        invoke: (run) => usage.invoke('fanoutlane', run),
      });
      process.env[RELAY_VARIABLES.laneFunction] = laneWorkers.functionName;
      process.env[RELAY_VARIABLES.laneEndpoint] = laneWorkers.endpoint;
    }
    const config = readRelayConfig(process.env);
    const client = createDynamoClient({ region: config.region, endpoint: dynamo.endpoint });
    await createTables(client, names);
    const devToken = await bootstrapDevToken(tenantTableStores(client, names.tenants, Date.now), options);
    devProvider = await startDevIdentityProvider({ port: nonNegativeInteger('AEP_LOCAL_OIDC_PORT', 0), redirectUris: [`${baseUrl}/console/`] });
    await configureLocalSignIn(new IdentityProviderStore(client, names.tenants, Date.now), config, devProvider, baseUrl);
    client.destroy();
    // Test-only fault injection, loaded only when AEP_FAULTS is set (see local/faults/fault-layer.ts).
    const faultPlan = process.env.AEP_FAULTS;
    const faults = faultPlan === undefined || faultPlan === '' ? undefined : (await import('./faults/fault-layer.ts')).createFaultLayer(faultPlan);

    // Handler modules read their configuration at module load, so they are imported only now;
    // the stream handler also needs the Lambda runtime's `awslambda` global first.
    installLambdaStreamingGlobal();
    // The sink-retry queue (SQS in AWS), shared by the functions that wake the retry worker.
    sinkRetryQueue = localRetryQueue({
      concurrency: config.bridges.retryConcurrency,
      visibilityTimeoutMs: SINK_RETRY_TIMEOUT_SECONDS * 1000,
      maxReceives: SINK_RETRY_MAX_RECEIVES,
      onDeadMessage: (wakeUp) => console.error(JSON.stringify({ level: 'error', component: 'local-sink-retry-queue', message: 'wake-up sent to the retry DLQ', wakeUp })),
    });
    // AEP_LOCAL_STANDIN_POST_MS: fan-out posts to a stand-in instead of the @connections
    // endpoint (the bench's lanes stage, local/stand-in-poster.ts).
    const standIn = standInPosterFromEnv(process.env, 'fanout');
    // Each function gets a runtime of its own, as in Lambda: its DynamoDB client reports to that
    // function's capacity meter and, with AEP_FAULTS, goes through the fault layer.
    const runtimeOf = (name: FunctionName): RelayRuntime => {
      const client = createDynamoClient({ region: config.region, endpoint: dynamo.endpoint, credentials: LOCAL_CREDENTIALS, meter: usage.meterOf(name) });
      // The fault plans count faults per command across functions; the bridges' stream consumer
      // would use up a plan meant for a request path, so it runs undecorated (its own failures are
      // tested with failing receivers, test/integration/bridges.test.ts).
      if (name !== 'bridges') faults?.decorateDynamo(client, name);
      return createRuntime({ config, dynamo: client, sinkRetryQueue, metrics: createRelayMetrics({ service: `aep-relay-${name}`, namespace: config.metricsNamespace }), ...(name === 'fanout' && standIn !== undefined ? { poster: standIn } : {}) });
    };
    // AEP_LOCAL_BUNDLES=<dir> runs the esbuild bundles that deploy (infra/bundle.ts) instead of
    // the sources: their own handlers, built from the environment (so neither metered nor faulted).
    const bundles = process.env.AEP_LOCAL_BUNDLES;
    const load = async <H>(name: FunctionName, source: () => Promise<{ handler: H; createHandler: (runtime: RelayRuntime) => H }>): Promise<H> =>
      bundles === undefined ? (await source()).createHandler(runtimeOf(name)) : (await importBundle<{ handler: H }>(bundles, name)).handler;
    const http = { handler: await load('http', () => import('../functions/http/handler.ts')) };
    const authorizer = { handler: await load('authorizer', () => import('../functions/authorizer/handler.ts')) };
    const socket = { handler: await load('socket', () => import('../functions/socket/handler.ts')) };
    const fanout = { handler: await load('fanout', () => import('../functions/fanout/handler.ts')) };
    const stream = { handler: await load('stream', () => import('../functions/stream/handler.ts')) };
    const bridges = { handler: await load('bridges', () => import('../functions/bridges/handler.ts')) };
    const sinkRetry = { handler: await load('sinkretry', () => import('../functions/sinkretry/handler.ts')) };
    // The deadline function runs the minute sweep (its near deadlines are the socket runtime's
    // timers here); it is not metered: the usage counters cover the request and delivery paths.
    const deadline = {
      handler:
        bundles === undefined
          ? (await import('../functions/deadline/handler.ts')).createHandler(createRuntime({ config, dynamo: createDynamoClient({ region: config.region, endpoint: dynamo.endpoint, credentials: LOCAL_CREDENTIALS }) }), unrefSleep)
          : (await importBundle<{ handler: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<void> }>(bundles, 'deadline')).handler,
    };
    // The EventBridge rule that invokes the deadline sweep every minute (infra/constructs/deadlines.ts).
    deadlineSweeps = setInterval(() => {
      deadline
        .handler(SCHEDULED_EVENT, lambdaContext('deadline', DEADLINE_TIMEOUT_SECONDS * 1000))
        .catch((error: unknown) => console.error(JSON.stringify({ level: 'error', component: 'local-deadline-sweep', message: 'deadline sweep failed (the on-failure queue in AWS)', error: String(error) })));
    }, nonNegativeInteger('AEP_LOCAL_DEADLINE_SWEEP_MS', 60_000) || 60_000);
    deadlineSweeps.unref();
    // The queue's event source mapping: batches of wake-ups as SQS records, failures reported back.
    sinkRetryQueue.consumeWith(async (wakeUps) => {
      const records = wakeUps.map((wakeUp, index) => sqsRecordOf(wakeUp, `local-${Date.now()}-${index}`));
      const response = await usage.invoke('sinkretry', () => sinkRetry.handler({ Records: records }, lambdaContext('sinkretry', SINK_RETRY_TIMEOUT_SECONDS * 1000)));
      const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      return wakeUps.filter((_, index) => failed.has(records[index]?.messageId ?? ''));
    });
    websocketApi = createWebSocketApi({
      route: (event, context) => {
        usage.socketRoute(event.requestContext.routeKey);
        return usage.invoke('socket', () => socket.handler(event, context));
      },
      authorizer: (event) => usage.invoke('authorizer', () => authorizer.handler(event)),
      region: config.region,
      invokeJitterMs: nonNegativeInteger('AEP_LOCAL_WS_JITTER_MS', 5),
      helloInvokeDelayMs: nonNegativeInteger('AEP_LOCAL_WS_HELLO_DELAY_MS', 0),
    });
    // The local CloudFront in front of everything, running the functions the stack deploys.
    gateway.routes.edge = createLocalEdge({ stageName: LOCAL_STAGE, region: config.region, originSecret });
    const corsOrigins = parseCorsOrigins(process.env[PLATFORM_VARIABLES.corsOrigins], PLATFORM_VARIABLES.corsOrigins);
    const streamCors = corsOrigins.length === 0 ? undefined : { allowOrigins: corsOrigins, allowMethods: STREAM_CORS_METHODS };
    if (corsOrigins.length > 0) gateway.routes.httpCors = { allowOrigins: corsOrigins, allowMethods: HTTP_CORS_METHODS };
    gateway.routes.upgrade = websocketApi.upgrade;
    origins.routes.upgrade = websocketApi.upgrade;
    let postDelayMs = nonNegativeInteger('AEP_LOCAL_POST_DELAY_MS', 0);
    management.connections = createConnectionsApi({
      connections: websocketApi.connections,
      maxBufferedBytes: nonNegativeInteger('AEP_LOCAL_WS_BUFFER_BYTES', 1024 * 1024),
      postDelayMs: () => postDelayMs,
      onPost: (status) => usage.post(status),
    });
    const streamHandler = stream.handler as StreamingHandler;
    gateway.routes.stream = (request, response, url) =>
      serveStreamingFunction((event, responseStream, context) => usage.invoke('stream', () => streamHandler(event, responseStream, context)), request, response, url, {
        ...(streamCors === undefined ? {} : { cors: streamCors }),
        invocations: streams,
      });
    gateway.routes.http = (event, context) => usage.invoke('http', () => http.handler(event, context));
    origins.routes.http = gateway.routes.http;
    gateway.routes.console = (request, response, url) => serveConsoleFile(request, response, url, CONSOLE_BUILD_DIR);

    if (faults !== undefined) {
      const { http: httpRoute } = gateway.routes;
      const connectionsRoute = management.connections;
      if (connectionsRoute !== undefined) management.connections = faults.wrapConnections(connectionsRoute, websocketApi.connections);
      if (httpRoute !== undefined) gateway.routes.http = faults.wrapHttp(httpRoute);
    }
    const fanoutHandler: FanoutHandler = faults?.wrapFanout((event, context) => fanout.handler(event, context)) ?? ((event, context) => fanout.handler(event, context));

    const streamFailures: StreamBatchFailure[] = [];
    // The deployed mappings' S3 on-failure destinations, as files (a persistent stack only).
    const archiveFanoutFailure = failedBatchArchive(options.inMemory ? undefined : join(options.dataDir, 'failed-batches', 'fanout'));
    const archiveBridgeFailure = failedBatchArchive(options.inMemory ? undefined : join(options.dataDir, 'failed-batches', 'bridges'));
    poller = createStreamPoller({
      dynamoEndpoint: dynamo.endpoint,
      region: config.region,
      credentials: LOCAL_CREDENTIALS,
      tableName: names.events,
      handler: (event, context) => {
        usage.fanoutBatch(event.Records.length);
        return usage.invoke('fanout', () => fanoutHandler(event, context));
      },
      pollIntervalMs: nonNegativeInteger('AEP_LOCAL_POLL_MS', DEFAULT_LOCAL_POLL_MS),
      // On persistent data, fan-out goes on after a restart where it was (replay serves only
      // what fan-out has finished with, so what it never got to would stay unserved).
      ...(options.inMemory ? {} : { checkpointFile: join(options.dataDir, 'fanout-stream-checkpoints.json') }),
      startingPosition: STREAM_STARTING_POSITIONS.fanout,
      onFailure: (failure) => {
        streamFailures.push(failure);
        archiveFanoutFailure(failure);
        console.error(JSON.stringify({ level: 'error', component: 'local-stream-poller', message: 'records sent to the on-failure destination', failure }));
      },
    });
    await poller.start();
    faults?.attachPoller(poller);
    // The bridges read the same stream through a mapping of their own, with their own checkpoints.
    bridgePoller = createStreamPoller({
      dynamoEndpoint: dynamo.endpoint,
      region: config.region,
      credentials: LOCAL_CREDENTIALS,
      tableName: names.events,
      handler: (event, context) => usage.invoke('bridges', () => bridges.handler(event, context)),
      functionTimeoutMs: BRIDGES_TIMEOUT_SECONDS * 1000,
      pollIntervalMs: nonNegativeInteger('AEP_LOCAL_POLL_MS', DEFAULT_LOCAL_POLL_MS),
      filter: passesBridgeFilter,
      ...(options.inMemory ? {} : { checkpointFile: join(options.dataDir, 'bridges-stream-checkpoints.json') }),
      startingPosition: STREAM_STARTING_POSITIONS.bridges,
      onFailure: (failure) => {
        archiveBridgeFailure(failure);
        console.error(JSON.stringify({ level: 'error', component: 'local-bridge-poller', message: 'records sent to the on-failure destination', failure }));
      },
    });
    await bridgePoller.start();
    return {
      baseUrl,
      originUrl: `http://127.0.0.1:${origins.port}`,
      managementEndpoint: management.endpoint,
      managementCredentials,
      dynamoEndpoint: dynamo.endpoint,
      devToken,
      identityProvider: { issuer: devProvider.issuer, displayName: LOCAL_PROVIDER_NAME, tenant: LOCAL_TENANT },
      config,
      streamFailures,
      usage: () => usage.snapshot(),
      resetUsage: () => usage.reset(),
      setPostDelayMs: (ms) => {
        postDelayMs = ms;
      },
      connectionIds: () => (websocketApi as WebSocketApi).connections.all().map((connection) => connection.connectionId),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A wake-up as the SQS event source hands it to the retry function (the fields it reads). */
function sqsRecordOf(wakeUp: SinkRetryWakeUp, messageId: string): SQSRecord {
  return {
    messageId,
    receiptHandle: messageId,
    body: JSON.stringify(wakeUp),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'local', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:aep-local-sink-retry',
    awsRegion: 'us-east-1',
  };
}

function nonNegativeInteger(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * Ensures the `local` tenant and a dev token with every scope. The token comes from
 * `devToken` when given; otherwise a persistent stack reuses the one it minted before
 * (kept in the git-ignored data folder) and an in-memory stack mints a fresh one.
 */
/**
 * The key that seals bridge sink secrets: AEP_BRIDGE_SEAL_KEY when set, else one kept beside
 * the dev token in the data folder (so sealed secrets still open after a restart), or a fresh
 * one for an in-memory stack.
 */
function localSealKey(options: StackOptions): string {
  const given = process.env.AEP_BRIDGE_SEAL_KEY;
  if (given !== undefined && given !== '') return given;
  const keyFile = join(options.dataDir, 'bridge-seal-key');
  if (!options.inMemory && existsSync(keyFile)) return readFileSync(keyFile, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  if (!options.inMemory) {
    mkdirSync(options.dataDir, { recursive: true });
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  return key;
}

/**
 * The seed of the relay's VAPID keys (`src/gateway/vapid-keys.ts`): AEP_PUSH_VAPID_SEED when set,
 * else one made at the first start and kept in the data folder (git-ignored, mode 600), so the
 * browsers' push subscriptions outlive a restart; an in-memory stack makes a fresh one.
 */
function localVapidSeed(options: StackOptions): string {
  const given = process.env[PUSH_VARIABLES.vapidSeed];
  if (given !== undefined && given !== '') return given;
  const seedFile = join(options.dataDir, 'vapid-seed');
  if (!options.inMemory && existsSync(seedFile)) return readFileSync(seedFile, 'utf8').trim();
  const seed = randomBytes(32).toString('base64url');
  if (!options.inMemory) {
    mkdirSync(options.dataDir, { recursive: true });
    writeFileSync(seedFile, `${seed}\n`, { mode: 0o600 });
  }
  return seed;
}

async function bootstrapDevToken({ tenants, tokens }: TenantTableStores, options: StackOptions): Promise<string> {
  await tenants.ensureTenant(LOCAL_TENANT);
  const tokenFile = join(options.dataDir, 'dev-token');
  let token = options.devToken;
  if (token === undefined && !options.inMemory && existsSync(tokenFile)) token = readFileSync(tokenFile, 'utf8').trim();
  token ??= mintTokenSecret();
  const digest = hashTokenSecret(token);
  if (!(await tokens.hasDigest(digest))) {
    await tokens.putToken({ tenant: LOCAL_TENANT, tokenId: `dev-${digest.slice(0, 12)}`, scopes: [...SCOPES], label: 'dev token (npm start)' }, digest);
  }
  if (!options.inMemory) {
    mkdirSync(options.dataDir, { recursive: true });
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  }
  return token;
}

/** What the console's button says for the local tenant's provider. */
const LOCAL_PROVIDER_NAME = 'Local dev provider';

/**
 * Sets the local tenant's identity provider to the embedded dev provider (fresh at every start:
 * its port, keys and client secret are), with a rule set giving the mapped group consume and
 * control at full capture: enough to watch the tail and answer attention requests.
 */
async function configureLocalSignIn(store: IdentityProviderStore, config: RelayConfig, provider: DevIdentityProvider, baseUrl: string): Promise<void> {
  const parsed = parseIdentityProviderDocument(
    {
      issuer: provider.issuer,
      clientId: provider.clientId,
      displayName: LOCAL_PROVIDER_NAME,
      redirectUris: [`${baseUrl}/console/`],
      scopes: ['profile', 'email', 'groups'],
      ruleSet: { name: 'local demo rules', rules: [{ claim: 'groups', equals: DEV_MAPPED_GROUP, scopes: ['consume', 'control'], maxCapture: 'full' }] },
    },
    { allowLoopback: true },
  );
  if (!parsed.ok) throw new Error(`the local identity provider settings do not parse: ${parsed.reason}`);
  const sealKey = config.bridges.sealKey;
  if (sealKey === undefined) throw new Error('the local stack has no seal key');
  const { clientSecret: _unused, ...settings } = parsed.value;
  const sealedClientSecret = await aesSecretSealer(sealKey).seal(provider.clientSecret, { tenant: LOCAL_TENANT, sink: CLIENT_SECRET_SEAL_NAME });
  await store.putSettings(LOCAL_TENANT, { ...settings, sealedClientSecret, updatedAtMs: Date.now() });
}

/** Imports a deployable bundle (`<dir>/<name>/index.mjs`) typed as the source module it was built from. */
function importBundle<T>(dir: string, name: string): Promise<T> {
  return import(pathToFileURL(join(dir, name, 'index.mjs')).href) as Promise<T>;
}

/** The part of an EventBridge scheduled event the deadline function reads. */
const SCHEDULED_EVENT = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

/** A wait that does not keep the local process alive by itself (a sweep waiting at stop is dropped, as a frozen Lambda's would be). */
function unrefSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}
