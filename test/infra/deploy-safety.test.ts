/**
 * Issue 27, on the synthesized template (stand-in assets): what a first deploy that fails leaves
 * behind (removal policies), where the stream mappings start, where the batches they give up on
 * go, and how connection deadlines are kept (bounded: a minute rule, a queue of bounded
 * concurrency for the near ones, a failure queue). The data-table lock is data-tables-lock.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BRIDGES_MAX_RECORD_AGE } from '../../infra/constructs/bridges.ts';
import { DEADLINE_MAX_EVENT_AGE, DEADLINE_QUEUE_BATCH_SIZE, DEADLINE_QUEUE_CONCURRENCY, DEADLINE_QUEUE_MAX_RECEIVES, DEADLINE_QUEUE_VISIBILITY, DEADLINE_RETRY_ATTEMPTS } from '../../infra/constructs/deadlines.ts';
import { FAILED_BATCH_EXPIRY, FAILED_BATCH_METRICS_ID } from '../../infra/constructs/failed-batch-archive.ts';
import { FANOUT_MAX_RECORD_AGE } from '../../infra/constructs/fanout.ts';
import { DEADLINE_HORIZON_MS, DEADLINE_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { STREAM_STARTING_POSITIONS } from '../../src/config/stream-mappings.ts';
import { MAX_DEADLINE_DELAY_SECONDS } from '../../src/gateway/queued-deadlines.ts';
import { actionsOf, logicalIdOf, propertiesOf, refersTo, render, resourceOf, resourcesOf, resourcesOfType, statementsOfRole } from './template-queries.ts';
import type { Json } from './template-queries.ts';
import { synthesizeWithStandIns } from './stand-in-assets.ts';

const ALARM_TOPIC = 'arn:aws:sns:eu-west-1:111111111111:relay-alarms';
const defaults = synthesizeWithStandIns({ alarmTopicArn: ALARM_TOPIC });
const destroyed = synthesizeWithStandIns({ removalPolicy: 'destroy' }, 'AepRelay-destroy');

/** Every resource of the kinds that hold data or logs, with the policies CloudFormation reads. */
function keptResources(template: typeof defaults.template) {
  return ['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup', 'AWS::KMS::Key', 'AWS::S3::Bucket'].flatMap((type) => Object.entries(resourcesOfType(template, type)).map(([id, resource]) => ({ id, type, resource })));
}

describe('removal policies (item 3)', () => {
  it('retains every table, log group, key and bucket on update and delete, but deletes what a rolled-back first deploy created', () => {
    const kept = keptResources(defaults.template);
    // 3 tables, a log group per function plus the HTTP API's, the sink-secrets key, the console bucket and two failed-batch archives.
    expect(new Set(kept.map((entry) => entry.type))).toEqual(new Set(['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup', 'AWS::KMS::Key', 'AWS::S3::Bucket']));
    for (const { id, resource } of kept) {
      expect({ id, deletion: resource.DeletionPolicy, replace: resource.UpdateReplacePolicy }).toEqual({ id, deletion: 'RetainExceptOnCreate', replace: 'Retain' });
    }
    expect(JSON.stringify(defaults.template.toJSON())).not.toContain('"DeletionPolicy":"Retain"');
  });

  it('deletes all of them with the stack under removalPolicy=destroy', () => {
    for (const { id, resource } of keptResources(destroyed.template)) {
      expect({ id, deletion: resource.DeletionPolicy }).toEqual({ id, deletion: 'Delete' });
    }
  });
});

describe('stream starting positions (item 4)', () => {
  const mappingOf = (fn: typeof defaults.stack.functions.fanout) => {
    const mappings = Object.values(resourcesOfType(defaults.template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(fn)));
    expect(mappings).toHaveLength(1);
    return mappings[0]!.Properties!;
  };

  it('starts fan-out at TRIM_HORIZON, records older than an hour discarded into the archive', () => {
    expect(mappingOf(defaults.stack.functions.fanout)).toMatchObject({ StartingPosition: 'TRIM_HORIZON', MaximumRecordAgeInSeconds: FANOUT_MAX_RECORD_AGE.toSeconds() });
  });

  it('starts the bridges at TRIM_HORIZON with a one-hour record-age cap, so a re-created mapping replays at most that into the sinks', () => {
    expect(mappingOf(defaults.stack.functions.bridges)).toMatchObject({ StartingPosition: 'TRIM_HORIZON', MaximumRecordAgeInSeconds: BRIDGES_MAX_RECORD_AGE.toSeconds() });
    expect(BRIDGES_MAX_RECORD_AGE.toSeconds()).toBe(3600);
  });

  it('starts where the local stack\'s pollers start', () => {
    expect(STREAM_STARTING_POSITIONS).toEqual({ fanout: mappingOf(defaults.stack.functions.fanout).StartingPosition, bridges: mappingOf(defaults.stack.functions.bridges).StartingPosition });
  });
});

describe('failed-batch archives (item 9)', () => {
  const { stack, template } = defaults;
  const archives = [
    { name: 'fan-out', fn: stack.functions.fanout, archive: stack.fanout.failedBatches },
    { name: 'bridges', fn: stack.functions.bridges, archive: stack.bridges.failedBatches },
  ];

  it.each(archives)('sends the batches $name gives up on, records included, to a private, encrypted, TLS-only bucket that expires them', ({ fn, archive }) => {
    const mapping = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).find((candidate) => refersTo(candidate.Properties?.FunctionName, logicalIdOf(fn)))!;
    expect(mapping.Properties?.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [logicalIdOf(archive.bucket), 'Arn'] } } });
    const bucket = propertiesOf(template, archive.bucket);
    expect(bucket).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      MetricsConfigurations: [{ Id: FAILED_BATCH_METRICS_ID }],
    });
    const rules = (bucket.LifecycleConfiguration as { Rules: Json[] }).Rules;
    expect(rules).toEqual([expect.objectContaining({ Status: 'Enabled', ExpirationInDays: FAILED_BATCH_EXPIRY.toDays() })]);
    const policy = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).find((candidate) => refersTo(candidate.Properties?.Bucket, logicalIdOf(archive.bucket)))!;
    expect(JSON.stringify(policy.Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it.each(archives)('lets the $name function put failure records in its archive and list it, nothing more, and no other function touch it', ({ fn, archive }) => {
    const bucketId = logicalIdOf(archive.bucket);
    for (const other of stack.functions.all) {
      const statements = statementsOfRole(template, other.role!).filter((statement) => refersTo(statement.Resource, bucketId));
      if (other !== fn) {
        expect(statements).toEqual([]);
        continue;
      }
      expect(statements.map((statement) => [actionsOf(statement), resourcesOf(statement).map(render)])).toEqual([
        [['s3:PutObject'], [`\${${bucketId}.Arn}/*`]],
        [['s3:ListBucket'], [`\${${bucketId}.Arn}`]],
      ]);
    }
  });

  it('alarms on archived batches of both mappings (S3 request metrics), notifying the topic, and no queue of coordinates is left', () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter((alarm) => alarm.Properties?.MetricName === 'PutRequests');
    expect(alarms).toHaveLength(2);
    for (const archive of archives) {
      const alarm = alarms.find((candidate) => refersTo(candidate.Properties?.Dimensions, logicalIdOf(archive.archive.bucket)))!;
      expect(alarm.Properties).toMatchObject({ Namespace: 'AWS/S3', Statistic: 'Sum', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', AlarmActions: [ALARM_TOPIC] });
      expect(alarm.Properties?.Dimensions).toContainEqual({ Name: 'FilterId', Value: FAILED_BATCH_METRICS_ID });
    }
    const destinations = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).map((mapping) => render(mapping.Properties?.DestinationConfig));
    expect(destinations.filter((destination) => destination.includes('Queue'))).toEqual([]);
  });
});

describe('connection deadlines (item 10)', () => {
  const { stack, template } = defaults;
  const deadline = stack.functions.deadline;

  it('sweeps every minute from an EventBridge rule, with bounded retries, an event age and a dead-letter queue', () => {
    const rule = propertiesOf(template, stack.deadlines.sweep);
    expect(rule).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    const targets = rule.Targets as Json[];
    expect(targets).toHaveLength(1);
    expect(refersTo(targets[0]!.Arn, logicalIdOf(deadline))).toBe(true);
    expect(targets[0]).toMatchObject({ RetryPolicy: { MaximumRetryAttempts: DEADLINE_RETRY_ATTEMPTS, MaximumEventAgeInSeconds: DEADLINE_MAX_EVENT_AGE.toSeconds() } });
    expect(refersTo(targets[0]!.DeadLetterConfig, logicalIdOf(stack.deadlines.failures))).toBe(true);
  });

  it('caps the deadline function: reserved concurrency, a timeout of the horizon plus a margin, and an on-failure queue for its asynchronous invocations', () => {
    const fn = propertiesOf(template, deadline);
    expect(fn).toMatchObject({ Timeout: DEADLINE_TIMEOUT_SECONDS });
    // No reservation a new account could not make (infra/reserved-concurrency.ts).
    expect(fn.ReservedConcurrentExecutions).toBeUndefined();
    expect(DEADLINE_TIMEOUT_SECONDS * 1000).toBeGreaterThan(DEADLINE_HORIZON_MS);
    expect(DEADLINE_TIMEOUT_SECONDS).toBeLessThan(900);
    const invokeConfigs = Object.values(resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig')).filter((config) => refersTo(config.Properties?.FunctionName, logicalIdOf(deadline)));
    expect(invokeConfigs).toHaveLength(1);
    const config = invokeConfigs[0]!.Properties!;
    expect(config).toMatchObject({ MaximumRetryAttempts: DEADLINE_RETRY_ATTEMPTS, MaximumEventAgeInSeconds: DEADLINE_MAX_EVENT_AGE.toSeconds() });
    expect(refersTo(config.DestinationConfig, logicalIdOf(stack.deadlines.failures))).toBe(true);
  });

  it('keeps the failures encrypted and TLS-only, alarms on them, and lets only the function and the rule write there', () => {
    expect(propertiesOf(template, stack.deadlines.failures)).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    const alarm = propertiesOf(template, stack.deadlines.failuresAlarm);
    expect(alarm).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0, AlarmActions: [ALARM_TOPIC] });
    expect(refersTo(alarm.Dimensions, logicalIdOf(stack.deadlines.failures))).toBe(true);
    const policy = Object.values(resourcesOfType(template, 'AWS::SQS::QueuePolicy')).find((candidate) => refersTo(candidate.Properties?.Queues, logicalIdOf(stack.deadlines.failures)))!;
    const statements = (policy.Properties?.PolicyDocument as { Statement: Json[] }).Statement;
    expect(statements.some((statement) => statement.Effect === 'Deny' && JSON.stringify(statement.Condition).includes('"aws:SecureTransport":"false"'))).toBe(true);
    expect(statements.some((statement) => statement.Effect === 'Allow' && JSON.stringify(statement.Principal).includes('events.amazonaws.com'))).toBe(true);
    for (const fn of stack.functions.all) {
      const sends = statementsOfRole(template, fn.role!).filter((statement) => refersTo(statement.Resource, logicalIdOf(stack.deadlines.failures)));
      if (fn === deadline) expect(sends.flatMap(actionsOf)).toContain('sqs:SendMessage');
      else expect(sends).toEqual([]);
    }
  });

  it('invokes the deadline function for near deadlines from nowhere but its queue: no role may invoke it, and it invokes nothing', () => {
    for (const fn of stack.functions.all) {
      const invokes = statementsOfRole(template, fn.role!).filter((statement) => actionsOf(statement).includes('lambda:InvokeFunction'));
      expect(invokes.filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, logicalIdOf(deadline)))), fn.node.id).toEqual([]);
      if (fn === deadline) expect(invokes).toEqual([]);
    }
    expect(resourceOf(template, deadline).Type).toBe('AWS::Lambda::Function');
  });

  it('bounds the near deadlines: the socket function queues them (SendMessage on the deadline queue, nothing more) and a mapping of bounded concurrency delivers them, with a dead-letter queue', () => {
    const queueId = logicalIdOf(stack.deadlines.queue);
    for (const fn of stack.functions.all) {
      const onQueue = statementsOfRole(template, fn.role!).filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, queueId)));
      if (fn === stack.functions.socket) expect(onQueue.flatMap(actionsOf)).toEqual(['sqs:SendMessage']);
      else if (fn === deadline) expect(onQueue.flatMap(actionsOf)).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage']));
      else expect(onQueue, fn.node.id).toEqual([]);
    }
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(deadline)));
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({ BatchSize: DEADLINE_QUEUE_BATCH_SIZE, ScalingConfig: { MaximumConcurrency: DEADLINE_QUEUE_CONCURRENCY } });
    expect(refersTo(mappings[0]!.Properties?.EventSourceArn, queueId)).toBe(true);
    const queue = propertiesOf(template, stack.deadlines.queue);
    expect(queue).toMatchObject({ SqsManagedSseEnabled: true, VisibilityTimeout: DEADLINE_QUEUE_VISIBILITY.toSeconds(), RedrivePolicy: { maxReceiveCount: DEADLINE_QUEUE_MAX_RECEIVES } });
    expect(refersTo((queue.RedrivePolicy as Json).deadLetterTargetArn, logicalIdOf(stack.deadlines.failures))).toBe(true);
    // SQS holds a message at most 15 minutes: every near deadline (within the horizon) fits.
    expect(DEADLINE_HORIZON_MS / 1000).toBeLessThanOrEqual(MAX_DEADLINE_DELAY_SECONDS);
    expect(DEADLINE_QUEUE_VISIBILITY.toSeconds()).toBeGreaterThanOrEqual(6 * DEADLINE_TIMEOUT_SECONDS);
  });
});
