/**
 * Issue 47's deploy points on the three templates `npm run lint:templates` lints
 * (infra/template-scenarios.ts: the defaults, a cross-origin dashboard's CORS, every option),
 * synthesized once each from stand-in assets: names that stay unique when one stage is deployed
 * in two regions of an account, a first create that can roll back, one alarm per failure and
 * none on another stack's errors, a deploy output that says who the alarms reach, one CLI layer,
 * the upload function's log retention, near deadlines of bounded concurrency, and CORS narrowed to
 * what a dashboard uses. The mapping lock is event-source-mappings-lock.test.ts.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { DEADLINE_QUEUE_CONCURRENCY } from '../../infra/constructs/deadlines.ts';
import { TEMPLATE_SCENARIOS } from '../../infra/template-scenarios.ts';
import type { TemplateScenario } from '../../infra/template-scenarios.ts';
import { actionsOf, logicalIdOf, logicalIdsIn, propertiesOf, refersTo, render, resourceOf, resourcesOfType, statementsOfRole } from './template-queries.ts';
import type { Json } from './template-queries.ts';
import { synthesizeWithStandIns } from './stand-in-assets.ts';

type Synthesized = ReturnType<typeof synthesizeWithStandIns>;

const scenarios = Object.fromEntries(
  Object.entries(TEMPLATE_SCENARIOS).map(([name, context]) => [name, synthesizeWithStandIns(context, `AepRelay-${'stage' in context ? context.stage : 'dev'}`)]),
) as Record<TemplateScenario, Synthesized>;
const everyScenario = Object.keys(TEMPLATE_SCENARIOS) as TemplateScenario[];

const outputOf = ({ template }: Synthesized, name: string): string => render((template.findOutputs(name)[name] as { Value: unknown } | undefined)?.Value);

/**
 * Resource types whose names share one namespace across the account's regions, and where each
 * keeps its name: CloudFront is global, and so are IAM and S3 bucket names. (Log groups, log
 * deliveries, queues, tables and functions are named per region.)
 */
const ACCOUNT_WIDE_NAMES: Record<string, (properties: Json) => unknown> = {
  'AWS::CloudFront::OriginAccessControl': (properties) => (properties.OriginAccessControlConfig as Json).Name,
  'AWS::CloudFront::ResponseHeadersPolicy': (properties) => (properties.ResponseHeadersPolicyConfig as Json).Name,
  'AWS::CloudFront::CachePolicy': (properties) => (properties.CachePolicyConfig as Json).Name,
  'AWS::CloudFront::OriginRequestPolicy': (properties) => (properties.OriginRequestPolicyConfig as Json).Name,
  'AWS::CloudFront::Function': (properties) => properties.Name,
  'AWS::CloudFront::KeyValueStore': (properties) => properties.Name,
  'AWS::IAM::Role': (properties) => properties.RoleName,
  'AWS::IAM::ManagedPolicy': (properties) => properties.ManagedPolicyName,
  'AWS::S3::Bucket': (properties) => properties.BucketName,
};

/** Every account-wide name the template sets, by logical id (unnamed resources get CloudFormation's unique names). */
function accountWideNames({ template }: Synthesized): Record<string, string> {
  return Object.fromEntries(
    Object.entries(ACCOUNT_WIDE_NAMES).flatMap(([type, nameOf]) =>
      Object.entries(resourcesOfType(template, type)).flatMap(([id, resource]) => {
        const name = nameOf(resource.Properties ?? {});
        return name === undefined ? [] : [[id, render(name)]];
      }),
    ),
  );
}

describe('names unique per account (item 10)', () => {
  it.each(everyScenario)('puts the region in every account-wide name: origin access controls, the response headers policy, CloudFront Functions (%s)', (name) => {
    const scenario = scenarios[name];
    const names = accountWideNames(scenario);
    const { stack } = scenario;
    // Not vacuous: the two origin access controls, the headers policy and the three functions are all named.
    expect(Object.keys(names).sort()).toEqual(
      [stack.edge.node.findChild('StreamAccessControl'), stack.console.originAccessControl, stack.console.responseHeaders, stack.edge.socketPathRewrite, stack.edge.streamAuthorizationCopy, stack.console.indexRewrite].map(logicalIdOf).sort(),
    );
    for (const [id, text] of Object.entries(names)) expect(text, id).toContain('${AWS::Region}');
  });

  it('gives the same stage in two regions of one account names that differ, each holding its region', () => {
    const [ireland, virginia] = ['eu-west-1', 'us-east-1'].map((region) => accountWideNames(synthesizeWithStandIns({}, 'AepRelay-dev', { account: '111111111111', region })));
    expect(Object.keys(ireland!).sort()).toEqual(Object.keys(virginia!).sort());
    for (const [id, name] of Object.entries(ireland!)) {
      expect(name, id).toContain('eu-west-1');
      expect(virginia![id], id).toContain('us-east-1');
      expect(Object.values(virginia!), id).not.toContain(name);
    }
  }, 60_000);

  it('keeps every name within CloudFront\'s limits in the longest region (64 for an origin access control, 128 for a policy)', () => {
    const { stack, template } = synthesizeWithStandIns({ stage: 'a-stage-name-of-the-longest-kind-the-settings-allow-0123456789ab' }, 'AepRelay-a-stage-name-of-the-longest-kind-the-settings-allow-0123456789ab', { account: '111111111111', region: 'us-isof-south-1' });
    for (const control of [stack.edge.node.findChild('StreamAccessControl'), stack.console.originAccessControl]) {
      expect(String((propertiesOf(template, control).OriginAccessControlConfig as Json).Name).length).toBeLessThanOrEqual(64);
    }
    expect(String((propertiesOf(template, stack.console.responseHeaders).ResponseHeadersPolicyConfig as Json).Name).length).toBeLessThanOrEqual(128);
  }, 60_000);
});

describe('the first create rolls back cleanly (item 12)', () => {
  const tablesOf = ({ stack, template }: Synthesized) => stack.tables.all.map((table) => resourceOf(template, table));

  it('creates with -c deletionProtection=false tables a failed create can delete (no protection, deleted on the create\'s rollback, kept after it), and says to deploy again', () => {
    const firstDeploy = synthesizeWithStandIns({ deletionProtection: 'false' }, 'AepRelay-first');
    for (const table of tablesOf(firstDeploy)) {
      expect(table.Properties?.DeletionProtectionEnabled).toBe(false);
      expect({ deletion: table.DeletionPolicy, replace: table.UpdateReplacePolicy }).toEqual({ deletion: 'RetainExceptOnCreate', replace: 'Retain' });
    }
    expect(outputOf(firstDeploy, 'TablesDeletionProtection')).toMatch(/^OFF: a failed create rolls back cleanly.*deploy again without -c deletionProtection=false to turn it on$/);
  }, 60_000);

  it.each(everyScenario)('protects the tables on every later deploy, and says so (%s)', (name) => {
    for (const table of tablesOf(scenarios[name])) expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
    expect(outputOf(scenarios[name], 'TablesDeletionProtection')).toBe('on');
  });
});

describe('alarms (item 14)', () => {
  const alarmsOf = ({ template }: Synthesized) => Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties ?? {});

  it.each(everyScenario)('has exactly one Errors alarm per function, so a failure notifies once (%s)', (name) => {
    const scenario = scenarios[name];
    const errors = alarmsOf(scenario).filter((alarm) => alarm.Namespace === 'AWS/Lambda' && alarm.MetricName === 'Errors');
    for (const fn of scenario.stack.functions.all) {
      expect(errors.filter((alarm) => refersTo(alarm.Dimensions, logicalIdOf(fn))), fn.node.id).toHaveLength(1);
    }
    expect(errors).toHaveLength(scenario.stack.functions.all.length);
  });

  it.each(everyScenario)('watches no account-wide DynamoDB metric: no UserErrors, every DynamoDB metric scoped to one of the stack\'s tables (%s)', (name) => {
    const { stack, template } = scenarios[name];
    const tableIds = stack.tables.all.map(logicalIdOf);
    const dynamoMetrics = alarmsOf(scenarios[name]).flatMap((alarm) => [alarm, ...((alarm.Metrics as Json[] | undefined) ?? []).flatMap((query) => (query.MetricStat === undefined ? [] : [(query.MetricStat as Json).Metric as Json]))]).filter((metric) => metric.Namespace === 'AWS/DynamoDB');
    expect(dynamoMetrics.length).toBeGreaterThan(0);
    for (const metric of dynamoMetrics) {
      expect(metric.MetricName).not.toBe('UserErrors');
      const tableDimension = (metric.Dimensions as Json[]).find((dimension) => dimension.Name === 'TableName');
      expect(logicalIdsIn(tableDimension?.Value).some((id) => tableIds.includes(id))).toBe(true);
    }
    const [dashboard] = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'));
    expect(render(dashboard?.Properties?.DashboardBody)).not.toContain('UserErrors');
  });

  it('says in the deploy output that the default topic has no subscriber, and who the alarms reach otherwise', () => {
    expect(outputOf(scenarios.defaults, 'AlarmSubscribers')).toMatch(/^NONE: the alarm topic has no subscriber, so no alarm reaches anyone; deploy with -c alarmEmail=/);
    expect(outputOf(scenarios['all-options'], 'AlarmSubscribers')).toBe('ops@example.com by e-mail, once the address confirms the link SNS sends it (until then nothing is delivered)');
    expect(outputOf(synthesizeWithStandIns({ alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:relay-alarms' }, 'AepRelay-topic'), 'AlarmSubscribers')).toBe('the subscribers of the topic given with -c alarmTopicArn (this stack subscribes none)');
  }, 60_000);
});

describe('deploy-time functions, near deadlines and CORS (item 15)', () => {
  it.each(everyScenario)('publishes one AWS CLI layer version, the one the console upload function runs with (%s)', (name) => {
    const { stack, template } = scenarios[name];
    const layers = Object.keys(resourcesOfType(template, 'AWS::Lambda::LayerVersion'));
    expect(layers).toHaveLength(1);
    const uploaders = Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).filter((fn) => (fn.Properties?.Layers as unknown[] | undefined) !== undefined);
    expect(uploaders).toHaveLength(1);
    expect(uploaders[0]!.Properties?.Layers).toEqual([{ Ref: layers[0] }]);
    // Two uploads (the page and the hashed assets, each its Cache-Control), one function between them.
    expect(Object.keys(resourcesOfType(template, 'Custom::CDKBucketDeployment'))).toHaveLength(2);
    expect(refersTo(uploaders[0]!.Properties?.LoggingConfig, logicalIdOf(stack.console.uploadLogs))).toBe(true);
  });

  it.each(everyScenario)('gives every function of the template, CDK\'s upload function included, a log group with the stack\'s retention (%s)', (name) => {
    const { template } = scenarios[name];
    const retention = name === 'all-options' ? 90 : 30;
    const logGroups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    for (const [id, fn] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))) {
      const [logGroupId] = logicalIdsIn((fn.Properties?.LoggingConfig as Json | undefined)?.LogGroup);
      expect(logGroupId, id).toBeDefined();
      expect(logGroups[logGroupId!]?.Properties?.RetentionInDays, id).toBe(retention);
    }
  });

  it.each(everyScenario)('bounds the near deadlines: no function invokes the deadline function, which takes them from its queue through a mapping of bounded concurrency, with no reservation (%s)', (name) => {
    const { stack, template } = scenarios[name];
    for (const fn of stack.functions.all) {
      const invokes = statementsOfRole(template, fn.role!).filter((statement) => actionsOf(statement).includes('lambda:InvokeFunction'));
      expect(invokes.filter((statement) => refersTo(statement.Resource, logicalIdOf(stack.functions.deadline))), fn.node.id).toEqual([]);
    }
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(stack.functions.deadline)));
    expect(mappings.map((mapping) => mapping.Properties?.ScalingConfig)).toEqual([{ MaximumConcurrency: DEADLINE_QUEUE_CONCURRENCY }]);
    expect(refersTo(mappings[0]!.Properties?.EventSourceArn, logicalIdOf(stack.deadlines.queue))).toBe(true);
    expect(propertiesOf(template, stack.functions.deadline).ReservedConcurrentExecutions).toBeUndefined();
  });

  it('allows a cross-origin dashboard GET and POST (with OPTIONS) on the HTTP API, never PUT, PATCH or DELETE, and the stream GET and HEAD', () => {
    for (const name of ['cors', 'all-options'] as const) {
      const { stack, template } = scenarios[name];
      const cors = propertiesOf(template, stack.httpApi.api).CorsConfiguration as Json;
      expect(cors.AllowMethods, name).toEqual(['GET', 'POST', 'OPTIONS']);
      expect(cors.AllowOrigins, name).toEqual(['https://dashboard.example.com', 'http://localhost:5173']);
      expect((propertiesOf(template, stack.streamEndpoint.url).Cors as Json).AllowMethods, name).toEqual(['GET', 'HEAD']);
    }
    expect(propertiesOf(scenarios.defaults.template, scenarios.defaults.stack.httpApi.api).CorsConfiguration).toBeUndefined();
  });
});

describe('cdk-nag AwsSolutions', () => {
  it.each(everyScenario)('reports no unacknowledged finding (%s)', (name) => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(scenarios[name].stack);
    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources.map((resource) => resource.constructPath).join(', ')}`)).toEqual([]);
  });
});
