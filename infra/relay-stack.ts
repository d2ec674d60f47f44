/**
 * The relay stack: composes the constructs under infra/constructs and grants each function
 * exactly the table access its handler needs. Its shape is DESIGN.md "Shape".
 */
import { CfnOutput, Fn, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { RELAY_VARIABLES } from '../src/config/relay-environment.ts';
import type { FunctionName } from './bundle.ts';
import { RelayAlarmTopic } from './constructs/alarm-topic.ts';
import { ConsoleBucket } from './constructs/console-bucket.ts';
import { CONSOLE_PATH } from './constructs/console-site.ts';
import { RelayEdge, SOCKET_PATH } from './constructs/edge.ts';
import { RelayEdgeAccessLogs } from './constructs/edge-access-logs.ts';
import { RelayBridges } from './constructs/bridges.ts';
import { RelayDeadlines } from './constructs/deadlines.ts';
import { RelayDeliveryLanes } from './constructs/delivery-lanes.ts';
import { RelayFanout } from './constructs/fanout.ts';
import { OPERATOR_TENANT, RelayFunctions } from './constructs/relay-functions.ts';
import { RelayHttpApi } from './constructs/http-api.ts';
import { RelayObservability, relayMetricsNamespace } from './constructs/observability.ts';
import { RelayOriginSecret } from './constructs/origin-secret.ts';
import { RelayVapidSecret } from './constructs/vapid-secret.ts';
import { RelayTables } from './constructs/relay-tables.ts';
import { RelayStreamEndpoint } from './constructs/stream-endpoint.ts';
import { ITEM_READS, ITEM_WRITES, grantTableActions } from './constructs/table-access.ts';
import { RelayWebSocketApi } from './constructs/websocket-api.ts';
import { suppressAcceptedFindings } from './nag-suppressions.ts';
import type { RelaySettings } from './relay-settings.ts';
import { reservationsOf, reservedExecutionsByFunction } from './reserved-concurrency.ts';

export interface RelayStackProps extends StackProps {
  settings: RelaySettings;
  /** Bundle folder per function, from `bundleFunctions()` (infra/bundle.ts). */
  assetDirs: Readonly<Record<FunctionName, string>>;
  /** The built console, from `buildConsole()` (infra/console-build.ts). */
  consoleDir: string;
}

export class RelayStack extends Stack {
  public readonly tables: RelayTables;
  public readonly functions: RelayFunctions;
  public readonly httpApi: RelayHttpApi;
  public readonly webSocketApi: RelayWebSocketApi;
  public readonly streamEndpoint: RelayStreamEndpoint;
  public readonly fanout: RelayFanout;
  public readonly deliveryLanes: RelayDeliveryLanes;
  public readonly bridges: RelayBridges;
  public readonly deadlines: RelayDeadlines;
  public readonly edge: RelayEdge;
  public readonly observability: RelayObservability;
  public readonly console: ConsoleBucket;
  public readonly alarmTopic: RelayAlarmTopic;
  public readonly originSecret: RelayOriginSecret;
  /** The seed of the VAPID key that signs Web Push notifications. */
  public readonly vapidSecret: RelayVapidSecret;
  /** Absent with `-c edgeAccessLogs=false`. */
  public readonly edgeAccessLogs?: RelayEdgeAccessLogs;
  /** `AepRelay/{stage}`: the namespace of this stage's own metrics. */
  public readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: RelayStackProps) {
    super(scope, id, props);
    const { settings } = props;
    this.metricsNamespace = relayMetricsNamespace(settings.stage);

    this.tables = new RelayTables(this, 'Tables', { removalPolicy: settings.removalPolicy, deletionProtection: settings.deletionProtection });
    this.functions = new RelayFunctions(this, 'Functions', {
      assetDirs: props.assetDirs,
      tables: this.tables.names,
      replayBuffer: settings.replayBuffer,
      retentionDays: settings.retentionDays,
      logLevel: settings.logLevel,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      reservedConcurrency: reservedExecutionsByFunction(reservationsOf(settings)),
      maxLiveStreams: settings.liveStreams,
      tenantLimits: settings.tenantLimits,
      metricsNamespace: this.metricsNamespace,
      tracing: settings.tracing,
    });
    this.grantTableAccess();
    this.originSecret = new RelayOriginSecret(this, 'OriginSecret', { rotation: settings.originSecretRotation });
    this.functions.useOriginSecrets(this.originSecret.acceptedValues);

    const accessLogGroup = (logId: string): LogGroup => new LogGroup(this, logId, { retention: settings.logRetention, removalPolicy: settings.removalPolicy });
    this.httpApi = new RelayHttpApi(this, 'HttpApi', { handler: this.functions.http, accessLogGroup: accessLogGroup('HttpApiAccessLogs'), corsOrigins: settings.corsOrigins, throttle: settings.throttling.http });
    this.webSocketApi = new RelayWebSocketApi(this, 'WebSocketApi', {
      stageName: settings.stage,
      authorizer: this.functions.authorizer,
      handler: this.functions.socket,
      connectionManagers: this.functions.connectionManagers,
      throttle: { messages: settings.throttling.socketMessages, connects: settings.throttling.socketConnects },
      ...(settings.webSocketAccessLogs ? { accessLogGroup: accessLogGroup('WebSocketApiAccessLogs') } : {}),
    });
    this.functions.useManagementEndpoint(this.webSocketApi.managementEndpoint);
    this.streamEndpoint = new RelayStreamEndpoint(this, 'StreamEndpoint', { handler: this.functions.stream, corsOrigins: settings.corsOrigins });
    this.fanout = new RelayFanout(this, 'Fanout', { events: this.tables.events, handler: this.functions.fanout, removalPolicy: settings.removalPolicy });
    this.deliveryLanes = new RelayDeliveryLanes(this, 'DeliveryLanes', {
      fanout: this.functions.fanout,
      worker: this.functions.fanoutlane,
      connections: this.tables.connections,
      maxLanes: settings.deliveryLanes.maxLanes,
      laneDeliveries: settings.deliveryLanes.laneDeliveries,
    });
    this.bridges = new RelayBridges(this, 'Bridges', {
      events: this.tables.events,
      tenants: this.tables.tenants,
      handler: this.functions.bridges,
      handlerLogGroup: this.functions.logGroups.bridges,
      retryHandler: this.functions.sinkretry,
      retryLogGroup: this.functions.logGroups.sinkretry,
      admin: this.functions.http,
      eventBuses: settings.bridgeEventBuses,
      metricsNamespace: this.metricsNamespace,
      removalPolicy: settings.removalPolicy,
    });

    this.vapidSecret = new RelayVapidSecret(this, 'VapidSecret', {
      rotation: settings.vapidRotation,
      removalPolicy: settings.removalPolicy,
      ...(settings.pushContact === undefined ? {} : { contact: settings.pushContact }),
    });
    // Signing (the push lane and its retries) and publishing the public key (GET /push/key).
    for (const fn of [this.functions.bridges, this.functions.sinkretry, this.functions.http]) this.vapidSecret.useIn(fn);

    this.deadlines = new RelayDeadlines(this, 'Deadlines', {
      handler: this.functions.deadline,
      scheduler: this.functions.socket,
    });

    this.edge = new RelayEdge(this, 'Edge', {
      httpApiDomainName: this.httpApi.domainName,
      webSocketDomainName: this.webSocketApi.domainName,
      webSocketStageName: this.webSocketApi.stage.stageName,
      streamUrl: this.streamEndpoint.url,
      originSecretValue: this.originSecret.headerValue,
      comment: `AEP relay (${settings.stage})`,
      ...(settings.domainName === undefined || settings.certificateArn === undefined
        ? {}
        : { domainName: settings.domainName, certificate: Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn) }),
      ...(settings.webAclArn === undefined ? {} : { webAclArn: settings.webAclArn }),
    });
    if (settings.edgeAccessLogs) {
      this.edgeAccessLogs = new RelayEdgeAccessLogs(this, 'EdgeAccessLogs', { distribution: this.edge.distribution, retention: settings.logRetention, removalPolicy: settings.removalPolicy });
    }

    this.console = new ConsoleBucket(this, 'Console', {
      distribution: this.edge.distribution,
      assetDir: props.consoleDir,
      removalPolicy: settings.removalPolicy,
      logRetention: settings.logRetention,
      ...(settings.domainName === undefined ? {} : { domainName: settings.domainName }),
    });

    this.observability = new RelayObservability(this, 'Observability', {
      functions: { Http: this.functions.http, Authorizer: this.functions.authorizer, Socket: this.functions.socket, Fanout: this.functions.fanout, Stream: this.functions.stream, Deadline: this.functions.deadline, Bridges: this.functions.bridges, SinkRetry: this.functions.sinkretry, FanoutLane: this.functions.fanoutlane },
      fanout: this.functions.fanout,
      failedBatches: this.fanout.failedBatches.metricFailedBatches(),
      httpApi: this.httpApi.api,
      webSocketStage: this.webSocketApi.stage,
      socketLogGroup: this.functions.logGroups.socket,
      tables: { Events: this.tables.events, Connections: this.tables.connections, Tenants: this.tables.tenants },
      metricsNamespace: this.metricsNamespace,
    });
    // Every alarm of the stack, whichever construct made it, notifies the topic.
    this.alarmTopic = new RelayAlarmTopic(this, 'Alarms', {
      removalPolicy: settings.removalPolicy,
      ...(settings.alarmTopicArn === undefined ? {} : { topicArn: settings.alarmTopicArn }),
      ...(settings.alarmEmail === undefined ? {} : { email: settings.alarmEmail }),
    });
    this.alarmTopic.notifyEveryAlarm(this);

    this.addOutputs();
    suppressAcceptedFindings(this, settings);
  }

  /**
   * Least privilege per handler: on each table exactly the actions its stores issue
   * (src/store/*, table-access.ts), never Scan. What each one does there:
   * - http: ingest writes and reads the event log and lists sessions (the byActivity index);
   *   authenticates against tenants and, on the admin routes, manages tenants, tokens (a token
   *   is issued in a transaction with a condition check, src/store/token-store.ts), quotas,
   *   policies, sinks and letters, and closes a revoked token's connections.
   * - authorizer: resolves a token: one GetItem (src/relay/authenticate.ts).
   * - socket: appends events and reads replay, keeps connection state, subscriptions, claims,
   *   slots and rate windows; reads tokens, quotas and control policies.
   * - fanout: reads subscriptions and parks or clears connection state; in the event log it
   *   updates the session summaries, writes each emitter's order state and late entries, and
   *   reads a session's events to check its gaps and release what it held (BatchGetItem,
   *   session-order-store.ts); reads a tenant's quotas for its retention (the order states'
   *   expiry), so GetItem on tenants (the stream read permissions come with the event source).
   * - stream: reads replay and release points, keeps its subscription, consumes its inbox and
   *   keeps its slots; reads tokens and quotas.
   * - deadline: reads the deadline index and a connection's record, takes the deadline and
   *   removes the connection's state when its token expires.
   * The bridges' grants (tenants only) are in bridges.ts, the lane worker's (connections only) in delivery-lanes.ts.
   */
  private grantTableAccess(): void {
    const { events, connections, tenants } = this.tables;
    const { http, authorizer, socket, fanout, stream, deadline } = this.functions;
    const eventsReads = [...ITEM_READS, 'dynamodb:BatchGetItem'] as const;
    const readWrite = [...ITEM_READS, ...ITEM_WRITES, 'dynamodb:BatchWriteItem'] as const;
    grantTableActions(http, [
      { table: events, actions: [...eventsReads, ...readWrite], indexQueries: true },
      { table: connections, actions: readWrite },
      { table: tenants, actions: [...readWrite, 'dynamodb:ConditionCheckItem'] },
    ]);
    grantTableActions(authorizer, [{ table: tenants, actions: ['dynamodb:GetItem'] }]);
    grantTableActions(socket, [
      { table: events, actions: [...eventsReads, ...readWrite] },
      { table: connections, actions: readWrite },
      { table: tenants, actions: ITEM_READS },
    ]);
    grantTableActions(fanout, [
      { table: events, actions: [...eventsReads, ...readWrite] },
      { table: connections, actions: readWrite },
      { table: tenants, actions: ['dynamodb:GetItem'] },
    ]);
    grantTableActions(stream, [
      { table: events, actions: eventsReads },
      { table: connections, actions: readWrite },
      { table: tenants, actions: ITEM_READS },
    ]);
    grantTableActions(deadline, [{ table: connections, actions: readWrite }]);
  }

  private addOutputs(): void {
    const baseUrl = `https://${this.edge.domainName}`;
    new CfnOutput(this, 'BaseUrl', { description: 'The relay base URL: /events, /.well-known/aep, /healthz, /stream, /socket', value: baseUrl });
    new CfnOutput(this, 'ConsoleUrl', { description: 'The tenant console (sign in with a token)', value: `${baseUrl}${CONSOLE_PATH}/` });
    new CfnOutput(this, 'WebSocketUrl', { description: 'WebSocket binding through CloudFront', value: `wss://${this.edge.domainName}${SOCKET_PATH}` });
    new CfnOutput(this, 'DistributionId', { description: 'The CloudFront distribution (aws cloudfront wait distribution-deployed --id …)', value: this.edge.distribution.distributionId });
    new CfnOutput(this, 'VapidSecretArn', { description: 'The seed of the Web Push VAPID key (docs/web-push.md "Rotating the VAPID key")', value: this.vapidSecret.secret.secretArn });
    new CfnOutput(this, 'OriginSecretArn', { description: 'The secret CloudFront sends to the HTTP and WebSocket APIs (docs/deploy-and-upgrade.md "Rotating the origin secret")', value: this.originSecret.secret.secretArn });
    if (this.edgeAccessLogs !== undefined) {
      // Only where the logs exist: a stack outside us-east-1 has none (edge-access-logs.ts).
      const output = new CfnOutput(this, 'EdgeAccessLogGroup', { description: 'CloudFront access logs (standard logging v2, no query strings)', value: this.edgeAccessLogs.logGroup.logGroupName });
      output.condition = this.edgeAccessLogs.condition;
    }
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Where every alarm notifies (ALARM and OK)', value: this.alarmTopic.topic.topicArn });
    new CfnOutput(this, 'AlarmSubscribers', { description: 'Who the alarms reach', value: this.alarmTopic.subscribers });
    new CfnOutput(this, 'EventsTableName', { value: this.tables.events.tableName });
    new CfnOutput(this, 'TablesDeletionProtection', { description: 'DynamoDB deletion protection on the three tables (docs/deploy-and-upgrade.md "First deploy on a new account")', value: this.tables.deletionProtectionStatus });
    new CfnOutput(this, 'ConnectionsTableName', { value: this.tables.connections.tableName });
    new CfnOutput(this, 'TenantsTableName', { value: this.tables.tenants.tableName });
    new CfnOutput(this, 'FailedFanoutBatchesBucket', { description: 'Stream batches fan-out gave up on, with their records (docs/operations.md "Failed batches")', value: this.fanout.failedBatches.bucket.bucketName });
    new CfnOutput(this, 'FailedBridgeBatchesBucket', { description: 'Stream batches the bridges gave up on, with their records (docs/operations.md "Failed batches")', value: this.bridges.failedBatches.bucket.bucketName });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName });
    new CfnOutput(this, 'IssueFirstTokenCommand', {
      description: "Issues the operator tenant's first token (it creates the tenant); run with credentials that can write the tenants table",
      value: Fn.join('', [`${RELAY_VARIABLES.tenantsTable}=`, this.tables.tenants.tableName, ` ${RELAY_VARIABLES.region}=`, this.region, ` npx aep-relay tokens issue --tenant ${OPERATOR_TENANT} --scopes emit,consume,control,admin`]),
    });
    // What a custom domain's DNS record points at (docs/deploy-and-upgrade.md "Custom domain"): the alias or CNAME target.
    new CfnOutput(this, 'DistributionDomainName', { description: "The distribution's own name (d….cloudfront.net), the target of a custom domain's DNS record", value: this.edge.distribution.distributionDomainName });
  }
}
