/**
 * The relay stack: composes the constructs under infra/constructs and grants each function
 * exactly the table access its handler needs. Its shape is DESIGN.md "Shape".
 */
import { CfnOutput, Fn, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { RELAY_VARIABLES } from '../src/config/relay-environment.ts';
import type { FunctionName } from './bundle.ts';
import { ConsoleBucket } from './constructs/console-bucket.ts';
import { CONSOLE_PATH } from './constructs/console-site.ts';
import { RelayEdge, SOCKET_PATH } from './constructs/edge.ts';
import { RelayBridges } from './constructs/bridges.ts';
import { RelayFanout } from './constructs/fanout.ts';
import { OPERATOR_TENANT, RelayFunctions } from './constructs/relay-functions.ts';
import { RelayHttpApi } from './constructs/http-api.ts';
import { RelayObservability } from './constructs/observability.ts';
import { RelayTables } from './constructs/relay-tables.ts';
import { RelayStreamEndpoint } from './constructs/stream-endpoint.ts';
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
  public readonly bridges: RelayBridges;
  public readonly edge: RelayEdge;
  public readonly observability: RelayObservability;
  public readonly console: ConsoleBucket;

  constructor(scope: Construct, id: string, props: RelayStackProps) {
    super(scope, id, props);
    const { settings } = props;

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
    });
    this.grantTableAccess();

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
    this.fanout = new RelayFanout(this, 'Fanout', { events: this.tables.events, handler: this.functions.fanout });
    const alarmTopic = settings.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
    this.bridges = new RelayBridges(this, 'Bridges', {
      events: this.tables.events,
      tenants: this.tables.tenants,
      handler: this.functions.bridges,
      handlerLogGroup: this.functions.logGroups.bridges,
      retryHandler: this.functions.sinkretry,
      retryLogGroup: this.functions.logGroups.sinkretry,
      admin: this.functions.http,
      eventBuses: settings.bridgeEventBuses,
      ...(alarmTopic === undefined ? {} : { alarmAction: new SnsAction(alarmTopic) }),
    });

    this.edge = new RelayEdge(this, 'Edge', {
      httpApiDomainName: this.httpApi.domainName,
      webSocketDomainName: this.webSocketApi.domainName,
      webSocketStageName: this.webSocketApi.stage.stageName,
      streamUrl: this.streamEndpoint.url,
      comment: `AEP relay (${settings.stage})`,
      ...(settings.domainName === undefined || settings.certificateArn === undefined
        ? {}
        : { domainName: settings.domainName, certificate: Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn) }),
      ...(settings.webAclArn === undefined ? {} : { webAclArn: settings.webAclArn }),
    });

    this.console = new ConsoleBucket(this, 'Console', {
      distribution: this.edge.distribution,
      assetDir: props.consoleDir,
      removalPolicy: settings.removalPolicy,
      ...(settings.domainName === undefined ? {} : { domainName: settings.domainName }),
    });

    this.observability = new RelayObservability(this, 'Observability', {
      functions: { Http: this.functions.http, Authorizer: this.functions.authorizer, Socket: this.functions.socket, Fanout: this.functions.fanout, Stream: this.functions.stream, Deadline: this.functions.deadline, Bridges: this.functions.bridges, SinkRetry: this.functions.sinkretry },
      fanout: this.functions.fanout,
      failedRecords: this.fanout.failedRecords,
      httpApi: this.httpApi.api,
      webSocketStage: this.webSocketApi.stage,
      socketLogGroup: this.functions.logGroups.socket,
      tables: { Events: this.tables.events, Connections: this.tables.connections, Tenants: this.tables.tenants },
      ...(alarmTopic === undefined ? {} : { alarmTopic }),
    });

    this.addOutputs();
    suppressAcceptedFindings(this, settings);
  }

  /**
   * Least privilege per handler, by grants on the specific tables (each grant also covers
   * the table's indexes, should a table have any):
   * - http: ingest writes and reads the event log; authenticates against tenants and, on the
   *   admin routes, manages tenants and tokens and closes a revoked token's connections.
   * - authorizer: resolves a token, read only.
   * - socket: appends events and reads replay, keeps connection state, subscriptions and
   *   claims, authenticates and reads control policies.
   * - fanout: reads subscriptions and parks or clears connection state; in the event log it
   *   updates the session summaries, writes each emitter's order state and late entries, and
   *   reads a session's events to check its gaps and release what it held (the stream read
   *   permissions come with the event source).
   * - stream: reads replay and release points, keeps its subscription and consumes its inbox, authenticates.
   * - deadline: reads a connection's record and removes its state when its token expires.
   */
  private grantTableAccess(): void {
    const { events, connections, tenants } = this.tables;
    const { http, authorizer, socket, fanout, stream, deadline } = this.functions;
    events.grantReadWriteData(http);
    tenants.grantReadWriteData(http);
    connections.grantReadWriteData(http);
    tenants.grantReadData(authorizer);
    events.grantReadWriteData(socket);
    connections.grantReadWriteData(socket);
    tenants.grantReadData(socket);
    connections.grantReadWriteData(fanout);
    // Session summaries (GET /sessions), session order (order states, late entries, gap checks).
    events.grantReadWriteData(fanout);
    events.grantReadData(stream);
    connections.grantReadWriteData(stream);
    tenants.grantReadData(stream);
    connections.grantReadWriteData(deadline);
  }

  private addOutputs(): void {
    const baseUrl = `https://${this.edge.domainName}`;
    new CfnOutput(this, 'BaseUrl', { description: 'The relay base URL: /events, /.well-known/aep, /healthz, /stream, /socket', value: baseUrl });
    new CfnOutput(this, 'ConsoleUrl', { description: 'The tenant console (sign in with a token)', value: `${baseUrl}${CONSOLE_PATH}/` });
    new CfnOutput(this, 'WebSocketUrl', { description: 'WebSocket binding through CloudFront', value: `wss://${this.edge.domainName}${SOCKET_PATH}` });
    new CfnOutput(this, 'WebSocketDirectUrl', { description: 'WebSocket binding on the execute-api endpoint (bypasses CloudFront)', value: this.webSocketApi.url });
    new CfnOutput(this, 'EventsTableName', { value: this.tables.events.tableName });
    new CfnOutput(this, 'ConnectionsTableName', { value: this.tables.connections.tableName });
    new CfnOutput(this, 'TenantsTableName', { value: this.tables.tenants.tableName });
    new CfnOutput(this, 'FailedFanoutRecordsQueueUrl', { description: 'Stream records fan-out gave up on', value: this.fanout.failedRecords.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName });
    new CfnOutput(this, 'IssueFirstTokenCommand', {
      description: "Issues the operator tenant's first token (it creates the tenant); run with credentials that can write the tenants table",
      value: Fn.join('', [`${RELAY_VARIABLES.tenantsTable}=`, this.tables.tenants.tableName, ` ${RELAY_VARIABLES.region}=`, this.region, ` npx aep-relay tokens issue --tenant ${OPERATOR_TENANT} --scopes emit,consume,control,admin`]),
    });
    // What a custom domain's DNS record points at (README "Custom domain"): the alias or CNAME target.
    new CfnOutput(this, 'DistributionDomainName', { description: "The distribution's own name (d….cloudfront.net), the target of a custom domain's DNS record", value: this.edge.distribution.distributionDomainName });
  }
}
