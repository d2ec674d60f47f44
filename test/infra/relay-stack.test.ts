/**
 * The CDK stack, synthesized once per scenario from the real bundles (infra/bundle.ts):
 * tables, functions, both APIs, the stream URL, fan-out, the CloudFront edge, least
 * privilege, alarms, outputs, cdk-nag, and the bundles themselves (each one loads and
 * exports `handler` with the environment the stack gives its function).
 *
 * Scenarios: defaults (no context), and a production-like one (custom domain and
 * certificate, retained tables, an alarm topic, a web ACL, WebSocket access logs).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, DEFAULT_BUNDLE_DIR, FUNCTION_NAMES, bundleFunctions } from '../../infra/bundle.ts';
import type { FunctionName } from '../../infra/bundle.ts';
import { FORWARDED_AUTHORIZATION_HEADER } from '../../infra/constructs/edge-functions.ts';
import { buildConsole } from '../../infra/console-build.ts';
import { consoleContentSecurityPolicy } from '../../infra/constructs/console-site.ts';
import { FANOUT_RETRY_ATTEMPTS } from '../../infra/constructs/fanout.ts';
import { STREAM_MEMORY_MB } from '../../infra/constructs/stream-memory.ts';
import { DEPLOYED_STREAM } from '../../bench/stages/sse-hour-model.ts';
import { EDGE_LOG_FIELDS } from '../../infra/constructs/edge-access-logs.ts';
import { ORIGIN_VERIFY_HEADER } from '../../src/auth/origin-verify.ts';
import { RelayStack } from '../../infra/relay-stack.ts';
import { settingsFromContext } from '../../infra/relay-settings.ts';
import { reservationsOf } from '../../infra/reserved-concurrency.ts';
import { projectContext } from '../../infra/project-context.ts';
import { FANOUT_KINDS, passesFanoutFilter } from '../../local/stream-records.ts';
import { DEFAULT_SETTINGS } from '../../infra/relay-settings.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { ACTIVITY_INDEX, CONNECTIONS_TABLE, EVENTS_TABLE, TABLE_DEFINITIONS, TENANTS_TABLE } from '../../src/store/table-definitions.ts';
import type { TableDefinition } from '../../src/store/table-definitions.ts';
import { PUSH_VARIABLES, RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import { actionsOf, logicalIdOf, propertiesOf, refersTo, render, resourceOf, resourcesOf, resourcesOfType, statementsOfRole } from './template-queries.ts';
import type { Json, Statement } from './template-queries.ts';

const run = promisify(execFile);

const PRODUCTION_CONTEXT = {
  stage: 'prod',
  replayBuffer: '500',
  retentionDays: '7',
  logLevel: 'debug',
  removalPolicy: 'retain',
  deletionProtection: 'true',
  domainName: 'relay.example.com',
  certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000000',
  alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:relay-alarms',
  webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/relay/00000000-0000-0000-0000-000000000000',
  webSocketAccessLogs: 'true',
  corsOrigins: 'https://dashboard.example.com,http://localhost:5173',
  streamConcurrency: '300',
  streamHeadroom: '30',
  alarmEmail: 'ops@example.com',
  tracing: 'true',
  originSecretRotation: 'true',
  vapidRotation: 'true',
  pushContact: 'mailto:ops@example.com',
};

interface Scenario {
  stack: RelayStack;
  template: Template;
}

let assetDirs: Record<FunctionName, string>;
let consoleDir: string;
let defaults: Scenario;
let production: Scenario;

/** The production scenario names its account and region (as `cdk deploy` does); the defaults stay environment-agnostic. */
function synthesize(context: Record<string, string>, env?: { account: string; region: string }): Scenario {
  // Under cdk.json's context, as `cdk deploy` runs the app: its feature flags shape the template.
  const app = new App({ context: { ...projectContext(), ...context } });
  const settings = settingsFromContext(app.node);
  const stack = new RelayStack(app, `AepRelay-${settings.stage}`, { settings, assetDirs, consoleDir, ...(env === undefined ? {} : { env }) });
  return { stack, template: Template.fromStack(stack) };
}

beforeAll(async () => {
  ({ assetDirs } = await bundleFunctions());
  consoleDir = await buildConsole();
  defaults = synthesize({});
  production = synthesize(PRODUCTION_CONTEXT, { account: '111111111111', region: 'eu-west-1' });
}, 120_000);

function tableOf(stack: RelayStack, definition: TableDefinition) {
  return { Events: stack.tables.events, Connections: stack.tables.connections, Tenants: stack.tables.tenants }[definition.id];
}

describe('tables', () => {
  it.each(TABLE_DEFINITIONS.map((definition) => [definition.id, definition] as const))('builds the %s table from its shared definition, on demand, with PITR and TTL', (_id, definition) => {
    const { stack, template } = defaults;
    const table = propertiesOf(template, tableOf(stack, definition));
    expect(table.KeySchema).toEqual([
      { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
    ]);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: definition.timeToLiveAttribute, Enabled: true });
    expect(table.StreamSpecification).toEqual(definition.streamNewImages ? { StreamViewType: 'NEW_IMAGE' } : undefined);
    expect(table.LocalSecondaryIndexes ?? []).toEqual(
      definition.localIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    );
    expect(table.GlobalSecondaryIndexes ?? []).toEqual(
      definition.globalIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    );
  });

  it('streams only the event log, and indexes no event on it (one write per event)', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.tables.events).StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    expect(propertiesOf(template, stack.tables.events).LocalSecondaryIndexes).toBeUndefined();
    expect(EVENTS_TABLE.localIndexes).toEqual([]);
    // The one global index is the sparse index of session summaries, keyed on attributes event items never carry.
    expect(EVENTS_TABLE.globalIndexes.map((index) => [index.indexName, index.partitionKey.name, index.sortKey.name])).toEqual([[ACTIVITY_INDEX, 'activityPk', 'activity']]);
    for (const definition of [CONNECTIONS_TABLE, TENANTS_TABLE]) expect(propertiesOf(template, tableOf(stack, definition)).StreamSpecification).toBeUndefined();
  });

  it.each([
    ['defaults', () => defaults],
    ['production', () => production],
  ])('retains the tables (except when their first deploy rolls back) and turns deletion protection on (%s)', (_name, scenario) => {
    const { stack, template } = scenario();
    for (const table of stack.tables.all) {
      const resource = resourceOf(template, table);
      expect(resource.DeletionPolicy).toBe('RetainExceptOnCreate');
      expect(resource.UpdateReplacePolicy).toBe('Retain');
      expect(resource.Properties?.DeletionProtectionEnabled).toBe(true);
    }
  });
});

describe('functions', () => {
  it.each(FUNCTION_NAMES)('runs %s on nodejs22.x, arm64, from its bundle, with JSON logs into a retained log group', (name) => {
    const { stack, template } = defaults;
    const fn = propertiesOf(template, stack.functions[name]);
    expect(fn.Runtime).toBe('nodejs22.x');
    expect(fn.Architectures).toEqual(['arm64']);
    expect(fn.Handler).toBe('index.handler');
    expect(fn.LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO' });
    const logGroup = propertiesOf(template, stack.functions.logGroups[name]);
    expect(refersTo((fn.LoggingConfig as Json).LogGroup, logicalIdOf(stack.functions.logGroups[name]))).toBe(true);
    expect(logGroup.RetentionInDays).toBe(30);
  });

  it('takes the application log level from context', () => {
    const { stack, template } = production;
    for (const fn of stack.functions.all) expect((propertiesOf(template, fn).LoggingConfig as Json).ApplicationLogLevel).toBe('DEBUG');
  });

  it('gives every function a role of its own with no managed policy', () => {
    const { stack, template } = defaults;
    const roles = new Set(stack.functions.all.map((fn) => logicalIdOf(fn.role!)));
    expect(roles.size).toBe(FUNCTION_NAMES.length);
    for (const fn of stack.functions.all) expect(propertiesOf(template, fn.role!).ManagedPolicyArns).toBeUndefined();
  });

  it.each([
    ['defaults', () => defaults, 1000, 30],
    ['production', () => production, 500, 7],
  ])('configures every function so readRelayConfig accepts it, with the table names and settings (%s)', (_name, scenario, replayBuffer, retentionDays) => {
    const { stack, template } = scenario();
    for (const fn of stack.functions.all) {
      const variables = (propertiesOf(template, fn).Environment as { Variables: Json }).Variables;
      const config = readRelayConfig(Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value)])));
      expect(config.tables).toEqual({
        events: `\${${logicalIdOf(stack.tables.events)}}`,
        connections: `\${${logicalIdOf(stack.tables.connections)}}`,
        tenants: `\${${logicalIdOf(stack.tables.tenants)}}`,
      });
      expect(config.replayBuffer).toBe(replayBuffer);
      expect(config.retentionDays).toBe(retentionDays);
      expect(config.surface).toEqual({ stream: true, socket: true });
      expect(config.dynamoEndpoint).toBeUndefined();
    }
  });

  it('points the functions that post to, close or look up WebSocket connections at the execute-api stage, never at CloudFront', () => {
    const { stack, template } = defaults;
    const expected = `https://\${${logicalIdOf(stack.webSocketApi.api)}}.execute-api.\${AWS::Region}.\${AWS::URLSuffix}/dev`;
    for (const fn of [stack.functions.socket, stack.functions.fanout, stack.functions.fanoutlane, stack.functions.http, stack.functions.stream]) {
      const variables = (propertiesOf(template, fn).Environment as { Variables: Json }).Variables;
      expect(render(variables.AEP_WS_MANAGEMENT_ENDPOINT)).toBe(expected);
      expect(refersTo(variables.AEP_WS_MANAGEMENT_ENDPOINT, logicalIdOf(stack.edge.distribution))).toBe(false);
    }
    for (const fn of [stack.functions.authorizer]) {
      expect(((propertiesOf(template, fn).Environment as { Variables: Json }).Variables).AEP_WS_MANAGEMENT_ENDPOINT).toBeUndefined();
    }
  });
});

describe('WebSocket API', () => {
  it('authorizes $connect with the token authorizer, with no identity source so header or query token both reach it', () => {
    const { stack, template } = defaults;
    const authorizers = resourcesOfType(template, 'AWS::ApiGatewayV2::Authorizer');
    expect(Object.keys(authorizers)).toHaveLength(1);
    const [authorizerId, authorizer] = Object.entries(authorizers)[0]!;
    expect(authorizer.Properties).toMatchObject({ AuthorizerType: 'REQUEST', IdentitySource: [] });
    expect(refersTo(authorizer.Properties?.AuthorizerUri, logicalIdOf(stack.functions.authorizer))).toBe(true);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$connect', AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
  });

  it('routes $connect, $default and $disconnect to the socket function', () => {
    const { stack, template } = defaults;
    const routes = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).filter((route) => refersTo(route.Properties?.ApiId, logicalIdOf(stack.webSocketApi.api)));
    expect(routes.map((route) => route.Properties?.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const integrations = resourcesOfType(template, 'AWS::ApiGatewayV2::Integration');
    for (const route of routes) {
      const [integrationId] = render(route.Properties?.Target).match(/(?<=\$\{)[^}]+/) ?? [];
      const integration = integrations[integrationId ?? ''];
      expect(integration?.Properties?.IntegrationType).toBe('AWS_PROXY');
      expect(refersTo(integration?.Properties?.IntegrationUri, logicalIdOf(stack.functions.socket))).toBe(true);
    }
  });

  it('deploys a stage named after the deployment, automatically', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.webSocketApi.stage)).toMatchObject({ StageName: 'dev', AutoDeploy: true });
    expect(propertiesOf(template, stack.webSocketApi.stage).AccessLogSettings).toBeUndefined();
    expect(propertiesOf(production.template, production.stack.webSocketApi.stage)).toMatchObject({ StageName: 'prod', AccessLogSettings: expect.objectContaining({ DestinationArn: expect.anything() }) });
  });
});

describe('entry-point throttling', () => {
  it('throttles the HTTP API, WebSocket messages and, tighter, WebSocket handshakes at the stage by default, as the settings say', () => {
    const { stack, template } = defaults;
    const { throttling } = DEFAULT_SETTINGS;
    expect(propertiesOf(template, stack.httpApi.stage).DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: throttling.http.rateLimit, ThrottlingBurstLimit: throttling.http.burstLimit });
    const socketStage = propertiesOf(template, stack.webSocketApi.stage);
    expect(socketStage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: throttling.socketMessages.rateLimit, ThrottlingBurstLimit: throttling.socketMessages.burstLimit });
    expect(socketStage.RouteSettings).toEqual({ $connect: { ThrottlingRateLimit: throttling.socketConnects.rateLimit, ThrottlingBurstLimit: throttling.socketConnects.burstLimit } });
    expect(throttling.socketConnects.rateLimit).toBeLessThan(throttling.socketMessages.rateLimit);
  });
});

describe('HTTP API', () => {
  it('routes the relay\'s HTTP paths to the http function with payload format 2.0', () => {
    const { stack, template } = defaults;
    const routes = Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).filter((route) => refersTo(route.Properties?.ApiId, logicalIdOf(stack.httpApi.api)));
    expect(routes.map((route) => route.Properties?.RouteKey).sort()).toEqual(['ANY /admin/{proxy+}', 'ANY /push/{proxy+}', 'ANY /signin/{proxy+}', 'GET /.well-known/aep', 'GET /events', 'GET /healthz', 'GET /history', 'GET /sessions', 'GET /token', 'POST /events']);
    const integrations = resourcesOfType(template, 'AWS::ApiGatewayV2::Integration');
    for (const route of routes) {
      const [integrationId] = render(route.Properties?.Target).match(/(?<=\$\{)[^}]+/) ?? [];
      const integration = integrations[integrationId ?? ''];
      expect(integration?.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(refersTo(integration?.Properties?.IntegrationUri, logicalIdOf(stack.functions.http))).toBe(true);
    }
  });

  it('serves them at the $default stage with access logs', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.httpApi.stage)).toMatchObject({ StageName: '$default', AutoDeploy: true, AccessLogSettings: expect.objectContaining({ DestinationArn: expect.anything() }) });
  });
});

describe('SSE stream endpoint', () => {
  it('exposes the stream function on an IAM-only function URL in response-streaming mode', () => {
    const { stack, template } = defaults;
    const url = propertiesOf(template, stack.streamEndpoint.url);
    expect(url).toMatchObject({ AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    expect(refersTo(url.TargetFunctionArn, logicalIdOf(stack.functions.stream))).toBe(true);
    expect(propertiesOf(template, stack.functions.stream).Timeout).toBe(900);
    // Sized from the bench's measured peak RSS (npm run bench -- --only sse-hour), not assumed.
    expect(propertiesOf(template, stack.functions.stream).MemorySize).toBe(STREAM_MEMORY_MB);
  });

  it('deploys the stream settings the bench measures the SSE stream-hour at (bench/stages/sse-hour-model.ts)', () => {
    const { stack, template } = defaults;
    const variables = (propertiesOf(template, stack.functions.stream).Environment as { Variables: Json }).Variables;
    const { sse } = readRelayConfig(Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value)])));
    const { pollMs, idlePollMs, backoffAfterPolls, heartbeatMs, revalidateMs, slotLeaseMs, idleEndMs, maxDurationMs, flushPaddingBytes, maxLiveStreams, maxStreamsPerTenant } = sse;
    expect({ pollMs, idlePollMs, backoffAfterPolls, heartbeatMs, revalidateMs, slotLeaseMs, idleEndMs, maxDurationMs, flushPaddingBytes, maxLiveStreams, maxStreamsPerTenant }).toEqual(DEPLOYED_STREAM);
  });

  it('lets only this distribution invoke it: InvokeFunctionUrl, and InvokeFunction via the URL (dual auth)', () => {
    const { stack, template } = defaults;
    const distribution = logicalIdOf(stack.edge.distribution);
    const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission'))
      .map((permission) => permission.Properties ?? {})
      .filter((permission) => permission.Principal === 'cloudfront.amazonaws.com');
    expect(permissions.map((permission) => permission.Action).sort()).toEqual(['lambda:InvokeFunction', 'lambda:InvokeFunctionUrl']);
    for (const permission of permissions) {
      expect(refersTo(permission.FunctionName, logicalIdOf(stack.streamEndpoint.url)) || refersTo(permission.FunctionName, logicalIdOf(stack.functions.stream))).toBe(true);
      expect(refersTo(permission.SourceArn, distribution)).toBe(true);
    }
    expect(permissions.find((permission) => permission.Action === 'lambda:InvokeFunction')?.InvokedViaFunctionUrl).toBe(true);
  });
});

describe('fan-out', () => {
  it('consumes the event log stream with bounded, bisected, per-record retries and parks failures in the queue', () => {
    const { stack, template } = defaults;
    // The bridges' own mapping on the same stream is checked in bridges.test.ts.
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((candidate) => refersTo(candidate.Properties?.FunctionName, logicalIdOf(stack.functions.fanout)));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!.Properties!;
    expect(mapping).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: FANOUT_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: 3600,
      ParallelizationFactor: 1,
      StartingPosition: 'TRIM_HORIZON',
    });
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [logicalIdOf(stack.tables.events), 'StreamArn'] });
    expect(refersTo(mapping.FunctionName, logicalIdOf(stack.functions.fanout))).toBe(true);
    expect(mapping.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [logicalIdOf(stack.fanout.failedBatches.bucket), 'Arn'] } } });
  });

  it('invokes only for inserted events and redelivery markers, and for order states holding events (their wake-up), as the local poller passes them', () => {
    const { template } = defaults;
    const mapping = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'))[0]!.Properties!;
    const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters;
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      { eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: [...FANOUT_KINDS] } } } },
      { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { kind: { S: ['order'] }, wakeAt: { N: [{ exists: true }] } } } },
    ]);
    const record = (eventName: 'INSERT' | 'MODIFY', NewImage: Record<string, { S?: string; N?: string }>) => ({ eventName, dynamodb: { NewImage } }) as unknown as DynamoDBRecord;
    expect(passesFanoutFilter(record('INSERT', { kind: { S: 'event' } }))).toBe(true);
    expect(passesFanoutFilter(record('MODIFY', { kind: { S: 'event' } }))).toBe(false);
    expect(passesFanoutFilter(record('MODIFY', { kind: { S: 'order' }, wakeAt: { N: '1' } }))).toBe(true);
    expect(passesFanoutFilter(record('MODIFY', { kind: { S: 'order' } }))).toBe(false);
    expect(passesFanoutFilter(record('INSERT', { kind: { S: 'session' } }))).toBe(false);
  });

  it('encrypts the failed-batch archive and refuses requests without TLS', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.fanout.failedBatches.bucket)).toMatchObject({ BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(stack.fanout.failedBatches.bucket) },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });
});

describe('CloudFront edge', () => {
  const distributionConfig = (scenario: Scenario): Json => propertiesOf(scenario.template, scenario.stack.edge.distribution).DistributionConfig as Json;
  const originsById = (scenario: Scenario): Record<string, Json> => Object.fromEntries((distributionConfig(scenario).Origins as Json[]).map((origin) => [origin.Id as string, origin]));
  const behaviours = (scenario: Scenario): Record<string, Json> => ({
    default: distributionConfig(scenario).DefaultCacheBehavior as Json,
    ...Object.fromEntries((distributionConfig(scenario).CacheBehaviors as Json[]).map((behaviour) => [behaviour.PathPattern as string, behaviour])),
  });
  const originOf = (scenario: Scenario, path: string): Json => originsById(scenario)[behaviours(scenario)[path]?.TargetOriginId as string] ?? {};

  it('sends the HTTP paths, and everything else, to the HTTP API, all methods allowed', () => {
    const httpApi = logicalIdOf(defaults.stack.httpApi.api);
    for (const path of ['default', '/events', '/.well-known/aep', '/healthz', '/admin/*']) {
      expect(refersTo(originOf(defaults, path).DomainName, httpApi), path).toBe(true);
      expect(behaviours(defaults)[path]?.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']));
    }
  });

  it('sends /stream to the function URL through origin access control, copying Authorization first', () => {
    const { stack } = defaults;
    const origin = originOf(defaults, '/stream');
    expect(refersTo(origin.DomainName, logicalIdOf(stack.streamEndpoint.url))).toBe(true);
    expect(origin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [logicalIdOf(stack.edge.node.findChild('StreamAccessControl')), 'Id'] });
    expect((origin.CustomOriginConfig as Json).OriginReadTimeout).toBe(60);
    expect(behaviours(defaults)['/stream']?.FunctionAssociations).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalIdOf(stack.edge.streamAuthorizationCopy), 'FunctionARN'] } }]);
    defaults.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 'lambda', SigningBehavior: 'always', SigningProtocol: 'sigv4' },
    });
  });

  it('sends /socket and /socket/ to the WebSocket API, rewriting the path to the stage', () => {
    const { stack } = defaults;
    for (const path of ['/socket', '/socket/']) {
      expect(refersTo(originOf(defaults, path).DomainName, logicalIdOf(stack.webSocketApi.api)), path).toBe(true);
      expect(behaviours(defaults)[path]?.FunctionAssociations, path).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalIdOf(stack.edge.socketPathRewrite), 'FunctionARN'] } }]);
    }
  });

  it('lets CORS preflights through to the stream function URL (GET, HEAD, OPTIONS)', () => {
    expect([...(behaviours(defaults)['/stream']?.AllowedMethods as string[])].sort()).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });

  it('runs deployed edge code that rewrites /socket to /{stage}, keeping the query, and copies only a viewer Authorization on /stream', () => {
    const { stack, template } = defaults;
    const handlerOf = (construct: Parameters<typeof propertiesOf>[1]) => new Function(`${propertiesOf(template, construct).FunctionCode as string}\nreturn handler;`)() as (event: unknown) => { uri: string; querystring: Json; headers: Record<string, { value: string }> };
    const rewritten = handlerOf(stack.edge.socketPathRewrite)({ request: { uri: '/socket', querystring: { access_token: { value: 't' } }, headers: {} } });
    expect(rewritten.uri).toBe('/dev');
    expect(rewritten.querystring).toEqual({ access_token: { value: 't' } });
    const copied = handlerOf(stack.edge.streamAuthorizationCopy)({ request: { uri: '/stream', querystring: {}, headers: { authorization: { value: 'Bearer aep_x' } } } });
    expect(copied.headers[FORWARDED_AUTHORIZATION_HEADER]).toEqual({ value: 'Bearer aep_x' });
    // Only a viewer Authorization header can set it: one sent on its own is dropped.
    const spoofed = handlerOf(stack.edge.streamAuthorizationCopy)({ request: { uri: '/stream', querystring: {}, headers: { [FORWARDED_AUTHORIZATION_HEADER]: { value: 'Bearer aep_y' } } } });
    expect(spoofed.headers[FORWARDED_AUTHORIZATION_HEADER]).toBeUndefined();
  });

  const isConsolePath = (path: string) => path === '/console' || path.startsWith('/console/');

  it('caches nothing and forwards every viewer header but Host, and every query string, on every relay behaviour', () => {
    for (const [path, behaviour] of Object.entries(behaviours(defaults)).filter(([pattern]) => !isConsolePath(pattern))) {
      expect(behaviour.CachePolicyId, path).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
      expect(behaviour.OriginRequestPolicyId, path).toBe(OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId);
      expect(behaviour.ViewerProtocolPolicy, path).toBe('https-only');
    }
  });

  it('serves the console from its S3 bucket through origin access control on /console and /console/*', () => {
    const { stack, template } = defaults;
    const bucket = logicalIdOf(stack.console.bucket);
    for (const path of ['/console', '/console/*']) {
      const origin = originOf(defaults, path);
      expect(refersTo(origin.DomainName, bucket), path).toBe(true);
      expect(origin.OriginAccessControlId, path).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Id'] });
      // No legacy origin access identity: OAC alone.
      expect((origin.S3OriginConfig as Json).OriginAccessIdentity ?? '', path).toBe('');
      const behaviour = behaviours(defaults)[path] as Json;
      expect(behaviour.AllowedMethods, path).toEqual(['GET', 'HEAD']);
      expect(behaviour.ViewerProtocolPolicy, path).toBe('redirect-to-https');
      expect(behaviour.CachePolicyId, path).toBe(CachePolicy.CACHING_OPTIMIZED.cachePolicyId);
      expect(behaviour.ResponseHeadersPolicyId, path).toEqual({ Ref: logicalIdOf(stack.console.responseHeaders) });
      expect(behaviour.FunctionAssociations, path).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalIdOf(stack.console.indexRewrite), 'FunctionARN'] } }]);
    }
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' },
    });
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({ ContentSecurityPolicy: { ContentSecurityPolicy: consoleContentSecurityPolicy(), Override: true }, FrameOptions: { FrameOption: 'DENY', Override: true } }),
      }),
    });
  });

  it("narrows the console's connect-src to the relay's own origin: 'self', plus wss:// of the custom domain when there is one", () => {
    const connectSrcOf = (scenario: Scenario) => {
      const config = propertiesOf(scenario.template, scenario.stack.console.responseHeaders).ResponseHeadersPolicyConfig as Json;
      const policy = (config.SecurityHeadersConfig as Json).ContentSecurityPolicy as Json;
      const directives = String(policy.ContentSecurityPolicy).split(';').map((directive) => directive.trim());
      return directives.find((directive) => directive.startsWith('connect-src '));
    };
    expect(connectSrcOf(defaults)).toBe("connect-src 'self'");
    expect(connectSrcOf(production)).toBe("connect-src 'self' wss://relay.example.com");
  });

  it('keeps the console bucket private: public access blocked, TLS only, encrypted, readable by this distribution alone', () => {
    const { stack, template } = defaults;
    const bucket = propertiesOf(template, stack.console.bucket);
    expect(bucket.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.BucketEncryption).toEqual({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] });
    expect(bucket.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    const policies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).filter((policy) => refersTo((policy.Properties as Json).Bucket, logicalIdOf(stack.console.bucket)));
    expect(policies).toHaveLength(1);
    const statements = ((policies[0]?.Properties as Json).PolicyDocument as Json).Statement as Json[];
    expect(statements.some((statement) => statement.Effect === 'Deny' && JSON.stringify(statement.Condition).includes('aws:SecureTransport'))).toBe(true);
    const reads = statements.filter((statement) => statement.Effect === 'Allow');
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    // Scoped to this distribution by its ARN, so another distribution's OAC cannot read the bucket.
    expect(refersTo((reads[0]?.Condition as Json).StringEquals, logicalIdOf(stack.edge.distribution))).toBe(true);
  });

  it('uploads the built console under console/: the page, its manifest and service worker revalidated on every load, hashed assets cached for good', () => {
    const { stack, template } = defaults;
    const deployments = Object.values(resourcesOfType(template, 'Custom::CDKBucketDeployment')).map((deployment) => deployment.Properties as Json);
    expect(deployments).toHaveLength(2);
    for (const properties of deployments) {
      expect(refersTo(properties.DestinationBucketName, logicalIdOf(stack.console.bucket))).toBe(true);
      expect(properties.DestinationBucketKeyPrefix).toBe('console/');
      expect(properties.Prune).toBe(true);
      // No invalidation, so the upload function holds no cloudfront:* permission.
      expect(properties.DistributionId).toBeUndefined();
    }
    const page = deployments.find((properties) => JSON.stringify(properties.Include) === '["index.html","manifest.webmanifest","sw.js"]');
    const assets = deployments.find((properties) => JSON.stringify(properties.Exclude) === '["index.html","manifest.webmanifest","sw.js"]');
    expect(page?.SystemMetadata).toEqual({ 'cache-control': 'no-cache' });
    expect(assets?.SystemMetadata).toEqual({ 'cache-control': 'public, max-age=31536000, immutable' });
    expect(existsSync(join(consoleDir, 'index.html'))).toBe(true);
  });

  it('runs deployed console edge code: /console/ and folders to index.html, /console redirected, files untouched', () => {
    const { stack, template } = defaults;
    const handler = new Function(`${propertiesOf(template, stack.console.indexRewrite).FunctionCode as string}\nreturn handler;`)() as (event: unknown) => Json;
    expect(handler({ request: { uri: '/console/', headers: {} } }).uri).toBe('/console/index.html');
    expect(handler({ request: { uri: '/console/assets/index-abc.js', headers: {} } }).uri).toBe('/console/assets/index-abc.js');
    expect(handler({ request: { uri: '/console', headers: {} } })).toMatchObject({ statusCode: 301, headers: { location: { value: '/console/' } } });
  });

  it('serves the custom domain with its certificate and TLS 1.2 at least, behind the web ACL', () => {
    const config = distributionConfig(production);
    expect(config.Aliases).toEqual(['relay.example.com']);
    expect(config.ViewerCertificate).toEqual({ AcmCertificateArn: PRODUCTION_CONTEXT.certificateArn, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' });
    expect(config.WebACLId).toBe(PRODUCTION_CONTEXT.webAclArn);
    expect(distributionConfig(defaults).Aliases).toBeUndefined();
  });
});

describe('stream concurrency', () => {
  const variablesOf = (scenario: Scenario, fn: LambdaFunction) => (propertiesOf(scenario.template, fn).Environment as { Variables: Json }).Variables;
  /** Every ReservedConcurrentExecutions in the template (every Lambda function, CDK's own included), by logical id. */
  const reservationsIn = (template: Template) =>
    Object.fromEntries(Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).flatMap(([id, resource]) => (resource.Properties?.ReservedConcurrentExecutions === undefined ? [] : [[id, resource.Properties.ReservedConcurrentExecutions]])));

  it('reserves no concurrency by default, so the stack deploys on a new account, and caps the streams at 180 itself', () => {
    const { stack, template } = defaults;
    expect(reservationsIn(template)).toEqual({});
    expect(variablesOf(defaults, stack.functions.stream).AEP_SSE_MAX_LIVE_STREAMS).toBe('180');
    expect(variablesOf(defaults, stack.functions.stream).AEP_SSE_MAX_STREAMS_PER_TENANT).toBe('45');
    // The retry worker is bounded by its mapping alone.
    const retryMapping = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).find((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(stack.functions.sinkretry)));
    expect(retryMapping?.Properties?.ScalingConfig).toEqual({ MaximumConcurrency: 5 });
  });

  it('reserves the stream function on request and keeps the relay a headroom below it (production)', () => {
    const { stack, template } = production;
    expect(reservationsIn(template)).toEqual({ [logicalIdOf(stack.functions.stream)]: 300 });
    expect(variablesOf(production, stack.functions.stream).AEP_SSE_MAX_LIVE_STREAMS).toBe('270');
    // Each tenant's share of that pool: a quarter of it.
    expect(variablesOf(production, stack.functions.stream).AEP_SSE_MAX_STREAMS_PER_TENANT).toBe(String(Math.ceil(270 / 4)));
  });

  it.each([
    ['defaults', {}],
    ['production', PRODUCTION_CONTEXT],
    ['both reservations', { streamConcurrency: '150', reserveSinkRetryConcurrency: 'true' }],
  ] as const)('reserves exactly what the preflight counts (%s)', (_name, context) => {
    const scenario = synthesize({ ...context });
    const byFunction = Object.fromEntries(reservationsOf(settingsFromContext(new App({ context: { ...context } }).node)).map((reservation) => [logicalIdOf(scenario.stack.functions[reservation.function]), reservation.executions]));
    expect(reservationsIn(scenario.template)).toEqual(byFunction);
  }, 60_000);
});

describe('tenant limits', () => {
  it('ships a default event rate per tenant and a frame budget per connection to every function', () => {
    const { stack, template } = defaults;
    for (const fn of [stack.functions.http, stack.functions.socket, stack.functions.stream, stack.functions.authorizer]) {
      const variables = (propertiesOf(template, fn).Environment as { Variables: Json }).Variables;
      expect(variables).toMatchObject({ AEP_DEFAULT_EVENTS_PER_SECOND: '1000', AEP_SOCKET_FRAMES_PER_SECOND: '100', AEP_SOCKET_FRAME_BURST: '500', AEP_FANOUT_TENANT_DELIVERIES: '5000' });
    }
  });
});

describe('CORS', () => {
  const httpApiOf = (scenario: Scenario) => propertiesOf(scenario.template, scenario.stack.httpApi.api);
  const streamUrlOf = (scenario: Scenario) => propertiesOf(scenario.template, scenario.stack.streamEndpoint.url);

  it('configures none by default: no browser origin may call the relay', () => {
    expect(httpApiOf(defaults).CorsConfiguration).toBeUndefined();
    expect(streamUrlOf(defaults).Cors).toBeUndefined();
  });

  it('allows the corsOrigins setting on the HTTP API (emit, discovery) with preflight answers, for GET and POST only', () => {
    expect(httpApiOf(production).CorsConfiguration).toEqual({
      AllowOrigins: ['https://dashboard.example.com', 'http://localhost:5173'],
      AllowMethods: ['GET', 'POST', 'OPTIONS'],
      AllowHeaders: ['authorization', 'content-type', 'aep-version', 'last-event-id'],
      ExposeHeaders: ['retry-after'],
      MaxAge: 600,
    });
  });

  it('allows the same origins on the stream function URL, for GET streams', () => {
    expect(streamUrlOf(production).Cors).toEqual({
      AllowOrigins: ['https://dashboard.example.com', 'http://localhost:5173'],
      AllowMethods: ['GET', 'HEAD'],
      AllowHeaders: ['authorization', 'content-type', 'aep-version', 'last-event-id'],
      ExposeHeaders: ['retry-after'],
      MaxAge: 600,
    });
  });
});

describe('least privilege', () => {
  const tableAccess = (scenario: Scenario, statements: Statement[]): Record<string, 'read' | 'write'> => {
    const { stack } = scenario;
    const tables = { events: stack.tables.events, connections: stack.tables.connections, tenants: stack.tables.tenants };
    const access: Record<string, 'read' | 'write'> = {};
    for (const [name, table] of Object.entries(tables)) {
      const onTable = statements.filter((statement) => resourcesOf(statement).some((resource) => render(resource) === `\${${logicalIdOf(table)}.Arn}`));
      const actions = onTable.flatMap(actionsOf);
      if (actions.includes('dynamodb:PutItem')) access[name] = 'write';
      else if (actions.includes('dynamodb:GetItem')) access[name] = 'read';
    }
    return access;
  };

  it.each([
    ['http', { events: 'write', connections: 'write', tenants: 'write' }],
    ['authorizer', { tenants: 'read' }],
    ['socket', { events: 'write', connections: 'write', tenants: 'read' }],
    // Tenants: the order lane reads a tenant's quotas for its retention (order states' expiry).
    ['fanout', { events: 'write', connections: 'write', tenants: 'read' }],
    ['stream', { events: 'read', connections: 'write', tenants: 'read' }],
    ['deadline', { connections: 'write' }],
    // The lane worker: deliveries' state in the connections table only (infra/constructs/delivery-lanes.ts).
    ['fanoutlane', { connections: 'write' }],
  ] as const)('gives the %s function only its tables', (name, expected) => {
    const fn = defaults.stack.functions[name];
    expect(tableAccess(defaults, statementsOfRole(defaults.template, fn.role!))).toEqual(expected);
  });

  it('grants ManageConnections per verb, each function only the verbs it calls, on this API stage\'s @connections', () => {
    const { stack, template } = defaults;
    const arnOf = (verb: string) => `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${${logicalIdOf(stack.webSocketApi.api)}}/dev/${verb}/@connections/*`;
    // post is POST, isOpen (the slot recount) GET, close DELETE (src/gateway/connection-poster.ts).
    const expected: Partial<Record<FunctionName, string[]>> = {
      socket: ['POST', 'GET', 'DELETE'],
      fanout: ['POST', 'DELETE'],
      fanoutlane: ['POST', 'DELETE'],
      http: ['POST', 'DELETE'],
      deadline: ['POST', 'DELETE'],
      stream: ['GET'],
    };
    for (const name of FUNCTION_NAMES) {
      const statements = statementsOfRole(template, stack.functions[name].role!).filter((statement) => actionsOf(statement).includes('execute-api:ManageConnections'));
      expect(statements.flatMap(resourcesOf).map(render).sort(), name).toEqual((expected[name] ?? []).map(arnOf).sort());
      for (const statement of statements) expect(actionsOf(statement), name).toEqual(['execute-api:ManageConnections']);
    }
  });

  it('grants no dynamodb:Scan, DescribeTable or wildcard DynamoDB action anywhere (nothing scans), and exact item actions per table', () => {
    for (const scenario of [defaults, production]) {
      const statements = Object.values(resourcesOfType(scenario.template, 'AWS::IAM::Policy')).flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
      const dynamoActions = statements.flatMap(actionsOf).filter((action) => action.startsWith('dynamodb:'));
      expect(dynamoActions.length).toBeGreaterThan(0);
      expect(dynamoActions).not.toContain('dynamodb:Scan');
      expect(dynamoActions).not.toContain('dynamodb:DescribeTable');
      for (const action of dynamoActions) expect(action).not.toContain('*');
    }
    const { stack, template } = defaults;
    const onTable = (name: FunctionName, table: typeof stack.tables.events) =>
      statementsOfRole(template, stack.functions[name].role!).filter((statement) => resourcesOf(statement).some((resource) => render(resource) === `\${${logicalIdOf(table)}.Arn}`)).flatMap(actionsOf).sort();
    // The authorizer resolves a token with one GetItem (src/relay/authenticate.ts): it could not read every digest.
    expect(onTable('authorizer', stack.tables.tenants)).toEqual(['dynamodb:GetItem']);
    expect(onTable('fanout', stack.tables.tenants)).toEqual(['dynamodb:GetItem']);
    expect(onTable('stream', stack.tables.events)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    // Issuing a token is a transaction with a condition check (src/store/token-store.ts): the admin routes only.
    for (const name of FUNCTION_NAMES) expect(onTable(name, stack.tables.tenants).includes('dynamodb:ConditionCheckItem'), name).toBe(name === 'http');
    // Only GET /sessions queries an index (byActivity), with Query only.
    for (const name of FUNCTION_NAMES) {
      const onIndexes = statementsOfRole(template, stack.functions[name].role!).filter((statement) => resourcesOf(statement).some((resource) => render(resource).endsWith('/index/*')));
      expect(onIndexes.flatMap(actionsOf), name).toEqual(name === 'http' ? ['dynamodb:Query'] : []);
    }
  });

  it('lets fan-out hand lanes to the lane worker, invoking only that function (which hands nothing on); no function invokes another (near deadlines are queued)', () => {
    const { stack, template } = defaults;
    const arnOf = (fn: LambdaFunction) => `\${${logicalIdOf(fn)}.Arn}`;
    const invoked = new Map<LambdaFunction, LambdaFunction>([[stack.functions.fanout, stack.functions.fanoutlane]]);
    for (const fn of stack.functions.all) {
      const invokes = statementsOfRole(template, fn.role!).filter((statement) => actionsOf(statement).includes('lambda:InvokeFunction'));
      const target = invoked.get(fn);
      expect(invokes.flatMap(resourcesOf).map(render), fn.node.id).toEqual(target === undefined ? [] : [arnOf(target)]);
    }
    expect((propertiesOf(template, stack.functions.socket).Environment as { Variables: Json }).Variables[RELAY_VARIABLES.deadlineQueueUrl]).toEqual({ Ref: logicalIdOf(stack.deadlines.queue) });
  });

  it('has no wildcard action anywhere, and a wildcard resource only for dynamodb:ListStreams (and X-Ray, with tracing on)', () => {
    // dynamodb:ListStreams and the X-Ray writes have no resource-level permissions, so they can
    // only name "*"; every record-reading action is on the stream ARN.
    for (const scenario of [defaults, production]) {
      const statements = Object.values(resourcesOfType(scenario.template, 'AWS::IAM::Policy')).flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
      for (const statement of statements) {
        for (const action of actionsOf(statement)) expect(action).not.toMatch(/(^\*$|:\*$)/);
        if (resourcesOf(statement).includes('*')) {
          // Action by action: with @aws-cdk/aws-iam:minimizePolicies statements with the same resource come merged.
          const allowed = scenario === production ? ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'] : ['dynamodb:ListStreams'];
          for (const action of actionsOf(statement)) expect(allowed).toContain(action);
        }
      }
    }
  });
});

describe('observability', () => {
  // The bridges' own alarms are checked in bridges.test.ts.
  const alarmsOf = (scenario: Scenario) => {
    const bridgeAlarms = new Set(scenario.stack.bridges.alarms.map(logicalIdOf));
    return Object.entries(resourcesOfType(scenario.template, 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => !bridgeAlarms.has(id))
      .map(([, alarm]) => alarm.Properties ?? {});
  };

  it('alarms on fan-out errors, iterator age, parked records, 5xx, failed WebSocket routes (not deliberate refusals), table throttles and Lambda throttles', () => {
    const alarms = alarmsOf(defaults);
    const byMetric = (name: string) => alarms.filter((alarm) => alarm.MetricName === name || JSON.stringify(alarm.Metrics ?? []).includes(`"MetricName":"${name}"`));
    expect(byMetric('IteratorAge').map((alarm) => alarm.Threshold)).toEqual([60_000]);
    expect(byMetric('ApproximateNumberOfMessagesVisible')).toHaveLength(1);
    expect(byMetric('5xx')).toHaveLength(1);
    // Not on IntegrationError, which counts the deliberate 401/429 refusals at $connect too.
    expect(byMetric('IntegrationError')).toHaveLength(0);
    expect(byMetric('SocketRouteFailures')).toEqual([expect.objectContaining({ Namespace: 'AepRelay/dev', Threshold: 0 })]);
    expect(byMetric('ExecutionError')).toHaveLength(1);
    expect(byMetric('ThrottledRequests')).toHaveLength(TABLE_DEFINITIONS.length);
    // Account-wide, with no table dimension: not the stack's to alarm on (deploy-scenarios.test.ts).
    expect(byMetric('UserErrors')).toHaveLength(0);
    expect(byMetric('Throttles')).toHaveLength(FUNCTION_NAMES.length);
    expect(byMetric('Errors')).toHaveLength(FUNCTION_NAMES.length);
    defaults.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // The failures are counted from the socket function's log line that marks them.
    defaults.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalIdOf(defaults.stack.functions.logGroups.socket) },
      FilterPattern: '{ $.message = "socket route failed" }',
      MetricTransformations: [{ MetricNamespace: 'AepRelay/dev', MetricName: 'SocketRouteFailures', MetricValue: '1' }],
    });
  });

  it('graphs the per-tenant metrics on the dashboard, one series per tenant (and refusal code) found by SEARCH', () => {
    const [dashboard] = Object.values(resourcesOfType(defaults.template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.parse(render(dashboard?.Properties?.DashboardBody)) as { widgets: Array<{ properties: { title?: string; metrics?: unknown[][] } }> };
    const expressionsOf = (title: string) =>
      (body.widgets.find((widget) => widget.properties.title === title)?.properties.metrics ?? []).flatMap((row) => row.flatMap((cell) => (typeof cell === 'object' && cell !== null && 'expression' in cell ? [(cell as { expression: string }).expression] : [])));
    expect(expressionsOf('Events admitted per tenant')).toEqual([`SEARCH('{AepRelay/dev,tenant} MetricName="EventsAdmitted"', 'Sum', 300)`]);
    expect(expressionsOf('Events refused per tenant and code')).toEqual([`SEARCH('{AepRelay/dev,tenant,code} MetricName="EventsRefused"', 'Sum', 300)`]);
    expect(expressionsOf('Deliveries per tenant')).toEqual([`SEARCH('{AepRelay/dev,tenant} MetricName="Deliveries"', 'Sum', 300)`]);
    expect(expressionsOf('Backpressure disconnects per tenant')).toEqual([`SEARCH('{AepRelay/dev,tenant} MetricName="BackpressureDisconnects"', 'Sum', 300)`]);
    expect(expressionsOf('Sockets and streams opened / closed per tenant')).toEqual([
      `SEARCH('{AepRelay/dev,tenant} (MetricName="SocketsOpened" OR MetricName="SocketsClosed" OR MetricName="StreamsOpened" OR MetricName="StreamsClosed")', 'Sum', 300)`,
    ]);
    expect(expressionsOf('Commands routed per tenant')).toEqual([`SEARCH('{AepRelay/dev,tenant} MetricName="CommandsRouted"', 'Sum', 300)`]);
    expect(expressionsOf('Commands refused per tenant and code')).toEqual([`SEARCH('{AepRelay/dev,tenant,code} MetricName="CommandsRefused"', 'Sum', 300)`]);
  });

  it('notifies the alarm topic on ALARM and OK when one is given: every alarm of the template, the bridges\' included', () => {
    const alarms = Object.values(resourcesOfType(production.template, 'AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties ?? {});
    expect(alarms.length).toBeGreaterThan(20);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([PRODUCTION_CONTEXT.alarmTopicArn]);
      expect(alarm.OKActions).toEqual([PRODUCTION_CONTEXT.alarmTopicArn]);
    }
    production.template.resourceCountIs('AWS::SNS::Topic', 0);
    // The e-mail setting subscribes to whichever topic the alarms notify.
    production.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: PRODUCTION_CONTEXT.alarmTopicArn });
  });

  it('creates an encrypted, TLS-only alarm topic by default, which every alarm of the template notifies on ALARM and OK', () => {
    const { stack, template } = defaults;
    const topicId = logicalIdOf(stack.alarmTopic.topic);
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties ?? {});
    expect(alarms.length).toBeGreaterThan(20);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
    }
    const topic = propertiesOf(template, stack.alarmTopic.topic);
    expect(refersTo(topic.KmsMasterKeyId, logicalIdOf(stack.alarmTopic.key!))).toBe(true);
    expect(propertiesOf(template, stack.alarmTopic.key!).EnableKeyRotation).toBe(true);
    const statements = Object.values(resourcesOfType(template, 'AWS::SNS::TopicPolicy'))
      .filter((policy) => refersTo(policy.Properties?.Topics, topicId))
      .flatMap((policy) => ((policy.Properties?.PolicyDocument as Json).Statement as Json[]));
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'cloudwatch.amazonaws.com' } }));
    // No e-mail unless asked for.
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    expect(render(template.findOutputs('AlarmTopicArn').AlarmTopicArn?.Value)).toBe(`\${${topicId}}`);
  });

  it('refuses an alarmEmail that is not one address', () => {
    expect(() => settingsFromContext(new App({ context: { alarmEmail: 'ops@example.com,dev@example.com' } }).node)).toThrow('alarmEmail');
  });
});

describe('outputs', () => {
  const outputs = (scenario: Scenario): Record<string, string> =>
    Object.fromEntries(Object.entries(scenario.template.findOutputs('*')).map(([name, output]) => [name, render((output as { Value: unknown }).Value)]));

  it('prints the base URL, the console URL, the WebSocket URL through CloudFront, the table names, the failed-batch buckets and the first-token command', () => {
    const { stack } = defaults;
    const printed = outputs(defaults);
    const distribution = `\${${logicalIdOf(stack.edge.distribution)}.DomainName}`;
    expect(printed.BaseUrl).toBe(`https://${distribution}`);
    expect(printed.ConsoleUrl).toBe(`https://${distribution}/console/`);
    expect(printed.WebSocketUrl).toBe(`wss://${distribution}/socket`);
    expect(printed.DistributionId).toBe(`\${${logicalIdOf(stack.edge.distribution)}}`);
    expect(printed.OriginSecretArn).toBe(`\${${logicalIdOf(stack.originSecret.secret)}}`);
    expect(printed.EventsTableName).toBe(`\${${logicalIdOf(stack.tables.events)}}`);
    expect(printed.ConnectionsTableName).toBe(`\${${logicalIdOf(stack.tables.connections)}}`);
    expect(printed.TenantsTableName).toBe(`\${${logicalIdOf(stack.tables.tenants)}}`);
    expect(printed.FailedFanoutBatchesBucket).toBe(`\${${logicalIdOf(stack.fanout.failedBatches.bucket)}}`);
    expect(printed.FailedBridgeBatchesBucket).toBe(`\${${logicalIdOf(stack.bridges.failedBatches.bucket)}}`);
    expect(printed.IssueFirstTokenCommand).toBe(`AEP_TENANTS_TABLE=\${${logicalIdOf(stack.tables.tenants)}} AWS_REGION=\${AWS::Region} npx aep-relay tokens issue --tenant operator --scopes emit,consume,control,admin`);
  });

  it('prints no direct execute-api URL: the APIs answer only CloudFront', () => {
    for (const scenario of [defaults, production]) {
      const printed = outputs(scenario);
      expect(printed.WebSocketDirectUrl).toBeUndefined();
      for (const [name, value] of Object.entries(printed)) {
        expect(value, name).not.toContain('execute-api');
        expect(refersTo(scenario.template.findOutputs(name)[name]?.Value, logicalIdOf(scenario.stack.webSocketApi.api)), name).toBe(false);
        expect(refersTo(scenario.template.findOutputs(name)[name]?.Value, logicalIdOf(scenario.stack.httpApi.api)), name).toBe(false);
      }
    }
  });

  it('prints the custom domain when there is one', () => {
    const printed = outputs(production);
    expect(printed.BaseUrl).toBe('https://relay.example.com');
    expect(printed.ConsoleUrl).toBe('https://relay.example.com/console/');
    expect(printed.WebSocketUrl).toBe('wss://relay.example.com/socket');
    // The DNS record's target (docs/deploy-and-upgrade.md "Custom domain"): the distribution's own name.
    expect(printed.DistributionDomainName).toBe(`\${${logicalIdOf(production.stack.edge.distribution)}.DomainName}`);
  });
});

describe('origin guard', () => {
  const originsOf = (scenario: Scenario): Json[] => ((propertiesOf(scenario.template, scenario.stack.edge.distribution).DistributionConfig as Json).Origins as Json[]);
  const secretReference = (scenario: Scenario, stage = '') => `{{resolve:secretsmanager:\${${logicalIdOf(scenario.stack.originSecret.secret)}}:SecretString::${stage}:}}`;

  it('has CloudFront add the generated secret as a custom header to the HTTP API and WebSocket API origins, and not to the stream URL (OAC)', () => {
    const { stack, template } = defaults;
    const secret = propertiesOf(template, stack.originSecret.secret);
    expect(secret.GenerateSecretString).toMatchObject({ PasswordLength: 48, ExcludePunctuation: true });
    for (const api of [stack.httpApi.api, stack.webSocketApi.api]) {
      const origin = originsOf(defaults).find((candidate) => refersTo(candidate.DomainName, logicalIdOf(api)));
      expect(origin?.OriginCustomHeaders).toHaveLength(1);
      const [header] = origin?.OriginCustomHeaders as Json[];
      expect(header?.HeaderName).toBe(ORIGIN_VERIFY_HEADER);
      expect(render(header?.HeaderValue)).toBe(secretReference(defaults));
    }
    const stream = originsOf(defaults).find((candidate) => refersTo(candidate.DomainName, logicalIdOf(stack.streamEndpoint.url)));
    expect(stream?.OriginCustomHeaders).toBeUndefined();
  });

  it('configures the check in the http function and the authorizer, with the same secret, and nowhere else', () => {
    const { stack, template } = defaults;
    for (const name of FUNCTION_NAMES) {
      const variables = (propertiesOf(template, stack.functions[name]).Environment as { Variables: Json }).Variables;
      if (name === 'http' || name === 'authorizer') expect(render(variables[RELAY_VARIABLES.originSecrets]), name).toBe(secretReference(defaults));
      else expect(variables[RELAY_VARIABLES.originSecrets], name).toBeUndefined();
    }
  });

  it('during a rotation (-c originSecretRotation=true) sends AWSCURRENT and accepts AWSCURRENT and AWSPREVIOUS', () => {
    const { stack, template } = production;
    for (const api of [stack.httpApi.api, stack.webSocketApi.api]) {
      const origin = originsOf(production).find((candidate) => refersTo(candidate.DomainName, logicalIdOf(api)));
      expect(render((origin?.OriginCustomHeaders as Json[])[0]?.HeaderValue)).toBe(secretReference(production, 'AWSCURRENT'));
    }
    for (const fn of [stack.functions.http, stack.functions.authorizer]) {
      const variables = (propertiesOf(template, fn).Environment as { Variables: Json }).Variables;
      expect(render(variables[RELAY_VARIABLES.originSecrets])).toBe(`${secretReference(production, 'AWSCURRENT')},${secretReference(production, 'AWSPREVIOUS')}`);
    }
  });
});

describe('Web Push VAPID seed', () => {
  const seedReference = (scenario: Scenario, stage = '') => `{{resolve:secretsmanager:\${${logicalIdOf(scenario.stack.vapidSecret.secret)}}:SecretString::${stage}:}}`;
  const signers: readonly FunctionName[] = ['bridges', 'sinkretry', 'http'];

  it('generates the seed in Secrets Manager and gives it to the functions that sign or publish the key, and to no other', () => {
    const { stack, template } = defaults;
    expect(propertiesOf(template, stack.vapidSecret.secret).GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    for (const name of FUNCTION_NAMES) {
      const variables = (propertiesOf(template, stack.functions[name]).Environment as { Variables: Json }).Variables;
      if (signers.includes(name)) expect(render(variables[PUSH_VARIABLES.vapidSeed]), name).toBe(seedReference(defaults));
      else expect(variables[PUSH_VARIABLES.vapidSeed], name).toBeUndefined();
      expect(variables[PUSH_VARIABLES.vapidPreviousSeed], name).toBeUndefined();
    }
  });

  it('during a rotation (-c vapidRotation=true) signs with AWSCURRENT and keeps AWSPREVIOUS, with the configured contact', () => {
    const { stack, template } = production;
    for (const name of signers) {
      const variables = (propertiesOf(template, stack.functions[name]).Environment as { Variables: Json }).Variables;
      expect(render(variables[PUSH_VARIABLES.vapidSeed]), name).toBe(seedReference(production, 'AWSCURRENT'));
      expect(render(variables[PUSH_VARIABLES.vapidPreviousSeed]), name).toBe(seedReference(production, 'AWSPREVIOUS'));
      expect(variables[PUSH_VARIABLES.vapidSubject], name).toBe('mailto:ops@example.com');
    }
  });
});

describe('stage-scoped metrics', () => {
  const namespacesOf = (scenario: Scenario): Set<string> => {
    const found = new Set<string>();
    for (const alarm of Object.values(resourcesOfType(scenario.template, 'AWS::CloudWatch::Alarm'))) {
      const namespace = alarm.Properties?.Namespace;
      if (typeof namespace === 'string' && !namespace.startsWith('AWS/')) found.add(namespace);
    }
    for (const filter of Object.values(resourcesOfType(scenario.template, 'AWS::Logs::MetricFilter'))) {
      for (const transformation of filter.Properties?.MetricTransformations as Json[]) found.add(transformation.MetricNamespace as string);
    }
    return found;
  };

  it('puts every metric filter, every alarm on the relay\'s own metrics and the handlers\' embedded metrics in AepRelay/{stage}', () => {
    expect([...namespacesOf(defaults)]).toEqual(['AepRelay/dev']);
    expect([...namespacesOf(production)]).toEqual(['AepRelay/prod']);
    for (const fn of defaults.stack.functions.all) {
      expect((propertiesOf(defaults.template, fn).Environment as { Variables: Json }).Variables[RELAY_VARIABLES.metricsNamespace]).toBe('AepRelay/dev');
    }
    expect(readRelayConfig({ AEP_EVENTS_TABLE: 'e', AEP_CONNECTIONS_TABLE: 'c', AEP_TENANTS_TABLE: 't', AEP_METRICS_NAMESPACE: 'AepRelay/prod' }).metricsNamespace).toBe('AepRelay/prod');
  });

  it('gives two stacks with different stages no namespace in common', () => {
    const dev = namespacesOf(defaults);
    expect(dev.size).toBeGreaterThan(0);
    for (const namespace of namespacesOf(production)) expect(dev.has(namespace)).toBe(false);
  });
});

describe('edge access logs and tracing', () => {
  it('delivers CloudFront standard logs (v2) to a retained CloudWatch log group, without the query string, where the delivery API exists', () => {
    const { stack, template } = defaults;
    const logs = stack.edgeAccessLogs!;
    const source = propertiesOf(template, logs.source);
    expect(source).toMatchObject({ LogType: 'ACCESS_LOGS' });
    expect(refersTo(source.ResourceArn, logicalIdOf(stack.edge.distribution))).toBe(true);
    const destination = propertiesOf(template, logs.destination);
    expect(refersTo(destination.DestinationResourceArn, logicalIdOf(logs.logGroup))).toBe(true);
    const delivery = propertiesOf(template, logs.delivery);
    expect(refersTo(delivery.DeliveryDestinationArn, logicalIdOf(logs.destination))).toBe(true);
    expect(delivery.DeliverySourceName).toBe(source.Name);
    expect(delivery.RecordFields).toEqual([...EDGE_LOG_FIELDS]);
    for (const field of ['cs-uri-query', 'cs(Referer)', 'cs(Cookie)']) expect(delivery.RecordFields as string[]).not.toContain(field);
    expect(propertiesOf(template, logs.logGroup)).toMatchObject({ RetentionInDays: 30 });
    expect(String(propertiesOf(template, logs.logGroup).LogGroupName)).toMatch(/^\/aws\/vendedlogs\/cloudfront\//);
    // CloudFront's log delivery API answers in us-east-1 only: every resource is conditional on it.
    const conditionId = logicalIdOf(logs.condition);
    expect((template.toJSON() as { Conditions: Json }).Conditions[conditionId]).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
    for (const resource of [logs.logGroup, logs.source, logs.destination, logs.delivery]) expect((resourceOf(template, resource) as { Condition?: string }).Condition).toBe(conditionId);
  });

  it('turns edge access logs off with -c edgeAccessLogs=false', () => {
    const app = new App({ context: { edgeAccessLogs: 'false' } });
    const stack = new RelayStack(app, 'AepRelay-nologs', { settings: settingsFromContext(app.node), assetDirs, consoleDir });
    expect(stack.edgeAccessLogs).toBeUndefined();
    Template.fromStack(stack).resourceCountIs('AWS::Logs::DeliverySource', 0);
  });

  it('leaves tracing off by default and, with -c tracing=true, traces every function actively with the X-Ray writes it needs', () => {
    for (const fn of defaults.stack.functions.all) {
      expect(propertiesOf(defaults.template, fn).TracingConfig).toBeUndefined();
      expect(statementsOfRole(defaults.template, fn.role!).flatMap(actionsOf).filter((action) => action.startsWith('xray:'))).toEqual([]);
    }
    for (const fn of production.stack.functions.all) {
      expect(propertiesOf(production.template, fn).TracingConfig).toEqual({ Mode: 'Active' });
      expect(statementsOfRole(production.template, fn.role!).flatMap(actionsOf)).toEqual(expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    }
  });
});

describe('cdk-nag AwsSolutions', () => {
  // cdk-nag 3 reports through CDK policy validation, not annotations: validateScope returns
  // what `cdk synth` would print (infra/app.ts registers the same pack).
  it.each([
    ['defaults', () => defaults],
    ['production', () => production],
  ])('reports no unacknowledged finding (%s)', (_name, scenario) => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(scenario().stack);
    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources.map((resource) => resource.constructPath).join(', ')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('does report a finding nobody acknowledged (the check is live)', () => {
    const stack = new Stack(new App(), 'Unacknowledged');
    new LambdaFunction(stack, 'Old', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler = async () => {}') });
    const report = new AwsSolutionsChecks(undefined).validateScope(stack);
    expect(report.violations.map((violation) => violation.ruleName)).toContain('AwsSolutions-L1');
  });
});

describe('bundles', () => {
  it.each(FUNCTION_NAMES)('writes dist/functions/%s/index.mjs with its dependencies inside, the AWS SDK included', (name) => {
    const file = join(DEFAULT_BUNDLE_DIR, name, BUNDLE_FILE);
    expect(assetDirs[name]).toBe(join(DEFAULT_BUNDLE_DIR, name));
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.map`)).toBe(true);
    // Nothing is left for the runtime to resolve: no static import, dynamic import or require of a package.
    const bundle = readFileSync(file, 'utf8');
    const unresolved = [/^\s*import\b[^\n]*?["'](?!node:)[^"'./][^"']*["'];?\s*$/m, /\bimport\(\s*["'](?!node:)[^"'./][^"']*["']\s*\)/, /__require\(\s*["']@aws-sdk\//];
    for (const pattern of unresolved) expect(bundle.match(pattern)?.[0]).toBeUndefined();
  });

  it.each(FUNCTION_NAMES)('loads the %s bundle with the environment its function gets, and it exports handler', async (name) => {
    const { stack, template } = defaults;
    const variables = (propertiesOf(template, stack.functions[name]).Environment as { Variables: Json }).Variables;
    // Tokens become dummy values; handlers read their configuration (and build clients) at load.
    const environment = Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, render(value).replace(/\$\{[^}]+\}/g, 'dummy')]));
    // The Lambda Node.js runtime installs `awslambda` before loading the handler; the stub behaves like it (streamifyResponse tags and returns the handler).
    const script = [
      'globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };',
      `const module = await import(${JSON.stringify(pathToFileURL(join(assetDirs[name], BUNDLE_FILE)).href)});`,
      'process.stdout.write(typeof module.handler);',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', script], {
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', ...environment },
      timeout: 30_000,
    });
    expect(stdout).toBe('function');
  });
});
