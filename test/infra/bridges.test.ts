/**
 * The bridges in the CDK stack: their own stream mapping (stored events only), the sink-secrets
 * KMS key, `events:PutEvents` on the configured buses only, and the alarms. Synthesized from
 * stand-in assets: what is checked here is the template, not the bundles (relay-stack.test.ts
 * loads every bundle, the bridges' included).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../infra/bundle.ts';
import type { FunctionName } from '../../infra/bundle.ts';
import { BRIDGES_RETRY_ATTEMPTS, DEAD_LETTER_METRIC, SINK_RETRY_BATCH_SIZE, SINK_RETRY_CONCURRENCY } from '../../infra/constructs/bridges.ts';
import { SINK_RETRY_MAX_RECEIVES } from '../../functions/runtime/create-bridges.ts';
import { BRIDGES_TIMEOUT_SECONDS, SINK_RETRY_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { RelayStack } from '../../infra/relay-stack.ts';
import { settingsFromContext } from '../../infra/relay-settings.ts';
import { projectContext } from '../../infra/project-context.ts';
import { BRIDGE_VARIABLES } from '../../src/config/relay-environment.ts';
import { actionsOf, logicalIdOf, propertiesOf, refersTo, resourcesOf, resourcesOfType, statementsOfRole } from './template-queries.ts';

const BUSES = ['arn:aws:events:eu-west-1:111111111111:event-bus/agents', 'arn:aws:events:eu-west-1:222222222222:event-bus/security'];

const assetDir = mkdtempSync(join(tmpdir(), 'aep-bridges-assets-'));
writeFileSync(join(assetDir, 'index.mjs'), 'export const handler = async () => undefined;\n');
const assetDirs = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, assetDir])) as Record<FunctionName, string>;
// A stand-in console build: these tests look at the bridges, not the console's files.
const consoleDir = mkdtempSync(join(tmpdir(), 'aep-bridges-console-'));
writeFileSync(join(consoleDir, 'index.html'), '<!doctype html>\n');

function synthesize(context: Record<string, string>) {
  // Under cdk.json's context (its feature flags), as `cdk deploy` runs the app.
  const app = new App({ context: { ...projectContext(), ...context } });
  const stack = new RelayStack(app, 'AepRelay-bridges', { settings: settingsFromContext(app.node), assetDirs, consoleDir });
  return { stack, template: Template.fromStack(stack) };
}

const withBuses = synthesize({ bridgeEventBuses: BUSES.join(','), alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:relay-alarms' });
const withoutBuses = synthesize({});

describe('bridges stack', () => {
  it('feeds the bridges function from the events stream through its own mapping, stored events only, from TRIM_HORIZON with a record-age cap, bounded retries and a failed-batch archive', () => {
    const { stack, template } = withBuses;
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(stack.functions.bridges)));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]?.Properties ?? {};
    expect(refersTo(mapping.EventSourceArn, logicalIdOf(stack.tables.events))).toBe(true);
    expect(mapping).toMatchObject({ StartingPosition: 'TRIM_HORIZON', MaximumRecordAgeInSeconds: 3600, BisectBatchOnFunctionError: true, MaximumRetryAttempts: BRIDGES_RETRY_ATTEMPTS, FunctionResponseTypes: ['ReportBatchItemFailures'], ParallelizationFactor: 1 });
    expect(JSON.parse((mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters[0]?.Pattern ?? '{}')).toEqual({ eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: ['event'] } } } });
    expect(refersTo(mapping.DestinationConfig, logicalIdOf(stack.bridges.failedBatches.bucket))).toBe(true);
  });

  it('bounds the bridges function at a 30 s timeout, twice the most the live budget may take', () => {
    const { stack, template } = withBuses;
    expect(propertiesOf(template, stack.functions.bridges)).toMatchObject({ Timeout: BRIDGES_TIMEOUT_SECONDS });
    expect(BRIDGES_TIMEOUT_SECONDS).toBe(30);
  });

  it('wakes the sink-retry function through an encrypted SQS queue with its own DLQ and a bounded mapping, unreserved unless asked', () => {
    const { stack, template } = withBuses;
    const retry = stack.functions.sinkretry;
    expect(propertiesOf(template, retry)).toMatchObject({ Runtime: 'nodejs22.x', Timeout: SINK_RETRY_TIMEOUT_SECONDS });
    // No reservation by default: a new account cannot reserve even 5 (Lambda keeps 100 unreserved).
    expect(propertiesOf(template, retry).ReservedConcurrentExecutions).toBeUndefined();
    const reserved = synthesize({ reserveSinkRetryConcurrency: 'true' });
    expect(propertiesOf(reserved.template, reserved.stack.functions.sinkretry).ReservedConcurrentExecutions).toBe(SINK_RETRY_CONCURRENCY);
    expect(SINK_RETRY_CONCURRENCY).toBe(5);
    const queue = propertiesOf(template, stack.bridges.retryQueue);
    expect(queue).toMatchObject({ SqsManagedSseEnabled: true, VisibilityTimeout: 6 * SINK_RETRY_TIMEOUT_SECONDS, MessageRetentionPeriod: 4 * 86_400 });
    expect((queue.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount).toBe(SINK_RETRY_MAX_RECEIVES);
    expect(refersTo((queue.RedrivePolicy as { deadLetterTargetArn: unknown }).deadLetterTargetArn, logicalIdOf(stack.bridges.retryFailures))).toBe(true);
    expect(propertiesOf(template, stack.bridges.retryFailures)).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter((mapping) => refersTo(mapping.Properties?.FunctionName, logicalIdOf(retry)));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]?.Properties ?? {};
    expect(refersTo(mapping.EventSourceArn, logicalIdOf(stack.bridges.retryQueue))).toBe(true);
    expect(mapping).toMatchObject({ BatchSize: SINK_RETRY_BATCH_SIZE, ScalingConfig: { MaximumConcurrency: SINK_RETRY_CONCURRENCY }, FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });

  it('lets the live lane, the retry worker and redrive (admin routes) send wake-ups, and nothing else touch the retry queue', () => {
    const { stack, template } = withBuses;
    const queueId = logicalIdOf(stack.bridges.retryQueue);
    const sqsActionsOf = (fn: typeof stack.functions.http) =>
      statementsOfRole(template, fn.role as never).filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, queueId))).flatMap(actionsOf);
    for (const fn of [stack.functions.bridges, stack.functions.sinkretry, stack.functions.http]) {
      expect(sqsActionsOf(fn)).toContain('sqs:SendMessage');
      const variables = (propertiesOf(template, fn).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(refersTo(variables[BRIDGE_VARIABLES.retryQueueUrl], queueId)).toBe(true);
    }
    // The retry function also receives and deletes (its event source mapping's grant); no one else touches the queue.
    expect(sqsActionsOf(stack.functions.sinkretry)).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage']));
    for (const fn of [stack.functions.bridges, stack.functions.http]) expect(sqsActionsOf(fn)).toEqual(['sqs:SendMessage']);
    for (const fn of [stack.functions.fanout, stack.functions.socket, stack.functions.stream, stack.functions.authorizer, stack.functions.deadline]) expect(sqsActionsOf(fn)).toEqual([]);
    // Decrypt only, on the sink-secrets key.
    const keyId = logicalIdOf(stack.bridges.secretsKey);
    const kms = statementsOfRole(template, stack.functions.sinkretry.role as never).filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, keyId))).flatMap(actionsOf);
    expect(kms).toEqual(['kms:Decrypt']);
  });

  it('grants events:PutEvents on the configured buses only, to the bridges and sink-retry functions and the admin routes', () => {
    const { stack, template } = withBuses;
    for (const fn of [stack.functions.bridges, stack.functions.sinkretry, stack.functions.http]) {
      const putEvents = statementsOfRole(template, fn.role as never).filter((statement) => actionsOf(statement).includes('events:PutEvents'));
      expect(putEvents).toHaveLength(1);
      expect(resourcesOf(putEvents[0] as never)).toEqual(BUSES);
    }
    for (const fn of [stack.functions.fanout, stack.functions.socket, stack.functions.stream, stack.functions.authorizer]) {
      expect(statementsOfRole(template, fn.role as never).flatMap(actionsOf)).not.toContain('events:PutEvents');
    }
    const { stack: plain, template: plainTemplate } = withoutBuses;
    expect(statementsOfRole(plainTemplate, plain.functions.bridges.role as never).flatMap(actionsOf)).not.toContain('events:PutEvents');
  });

  it('seals sink secrets with a rotating KMS key: the admin routes encrypt and decrypt, delivery only decrypts', () => {
    const { stack, template } = withBuses;
    expect(propertiesOf(template, stack.bridges.secretsKey)).toMatchObject({ EnableKeyRotation: true });
    const keyId = logicalIdOf(stack.bridges.secretsKey);
    const kmsActions = (fn: typeof stack.functions.http) =>
      statementsOfRole(template, fn.role as never).filter((statement) => resourcesOf(statement).some((resource) => refersTo(resource, keyId))).flatMap(actionsOf);
    expect(kmsActions(stack.functions.http)).toEqual(expect.arrayContaining(['kms:Encrypt', 'kms:Decrypt']));
    expect(kmsActions(stack.functions.bridges)).toContain('kms:Decrypt');
    expect(kmsActions(stack.functions.bridges)).not.toContain('kms:Encrypt');
    for (const fn of [stack.functions.bridges, stack.functions.http]) {
      const variables = (propertiesOf(template, fn).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(refersTo(variables[BRIDGE_VARIABLES.kmsKeyId], keyId)).toBe(true);
      expect(variables[BRIDGE_VARIABLES.eventBuses]).toBe(BUSES.join(','));
    }
  });

  it('alarms on dead letters, iterator age, failed records and the retry lane (backlog, DLQ), notifying the topic; the functions\' errors are observability\'s', () => {
    const { stack, template } = withBuses;
    expect(stack.bridges.alarms).toHaveLength(5);
    expect(stack.bridges.alarms.map((alarm) => propertiesOf(template, alarm).MetricName)).not.toContain('Errors');
    for (const alarm of stack.bridges.alarms) expect(propertiesOf(template, alarm).AlarmActions).toEqual(['arn:aws:sns:eu-west-1:111111111111:relay-alarms']);
    const filters = Object.values(resourcesOfType(template, 'AWS::Logs::MetricFilter')).map((filter) => filter.Properties ?? {});
    const deadLetterFilters = filters.filter((filter) => JSON.stringify(filter.MetricTransformations).includes(DEAD_LETTER_METRIC.name));
    // One on each function that dead-letters: the live lane and the retry worker.
    expect(deadLetterFilters).toHaveLength(2);
    for (const filter of deadLetterFilters) expect(filter).toMatchObject({ MetricTransformations: [expect.objectContaining({ MetricNamespace: 'AepRelay/dev', MetricName: DEAD_LETTER_METRIC.name, MetricValue: '$.parked' })] });
    const alarmOn = (queue: typeof stack.bridges.retryQueue) => stack.bridges.alarms.filter((alarm) => JSON.stringify(propertiesOf(template, alarm).Dimensions ?? []).includes(logicalIdOf(queue)));
    expect(alarmOn(stack.bridges.retryQueue)).toHaveLength(1);
    expect(alarmOn(stack.bridges.retryFailures)).toHaveLength(1);
  });

  it('refuses a bridgeEventBuses entry that is not a bus ARN', () => {
    expect(() => synthesize({ bridgeEventBuses: 'agents' })).toThrow('bridgeEventBuses');
  });
});
