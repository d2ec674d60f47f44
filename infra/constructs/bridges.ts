/**
 * The AEP-0005 bridges in AWS: the bridges function reads the event log's stream through an
 * event source mapping of its own (never inside live fan-out), sink secrets are sealed with a
 * KMS key, `events:PutEvents` is granted on the deployment's configured buses only, and alarms
 * watch the consumer falling behind, batches given up on and events being dead-lettered (the
 * functions' errors are alarmed with every other function's, in observability.ts).
 *
 * The per-tenant letter store is a partition of the tenants table (`T#{tenant}#BRIDGEDLQ`,
 * src/store/dead-letter-store.ts), so it needs no table of its own; batches that fail even
 * before a sink is tried (settings or store unreachable after every retry), or outgrow the
 * record age, are archived whole in S3 (`failed-batch-archive.ts`).
 *
 * The retry lane: what a sink did not accept within a stream batch's live budget is a retry
 * letter in that store, and a message on the sink-retry queue (an SQS standard queue, the
 * backoff as each message's DelaySeconds) wakes the sink-retry function for it, through a
 * mapping of bounded maximum concurrency, so retries against dead sinks can neither hold the
 * stream nor take more than that of the account's concurrency (a reservation to match is
 * optional, `-c reserveSinkRetryConcurrency=true`: a new account cannot make one). Messages
 * carry coordinates only; one that keeps failing goes to the retry queue's own DLQ.
 */
import { Duration } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_RETRY_CONCURRENCY } from '../../src/config/bridge-config.ts';
import { SINK_RETRY_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { BRIDGE_VARIABLES } from '../../src/config/relay-environment.ts';
import { STREAM_STARTING_POSITIONS } from '../../src/config/stream-mappings.ts';
import { SINK_RETRY_MAX_RECEIVES } from '../../functions/runtime/create-bridges.ts';
import { ITEM_READS, ITEM_WRITES, grantTableActions } from './table-access.ts';
import { FailedBatchArchive } from './failed-batch-archive.ts';

/** Records per invocation: one batch's events go to each sink in a few requests. */
export const BRIDGES_BATCH_SIZE = 100;
/** Retries of a batch that threw (its sinks' settings or dead-letter store unreachable) before it is parked in the queue. */
export const BRIDGES_RETRY_ATTEMPTS = 10;
/**
 * Records older than this are not handed to sinks but archived with the failed batches: a
 * mapping re-created on an old stream (it starts at TRIM_HORIZON) replays at most this much
 * into the sinks, not the stream's 24 h.
 */
export const BRIDGES_MAX_RECORD_AGE = Duration.hours(1);
/** The bridges' consumer is behind when its oldest record waits longer than this. */
export const BRIDGES_ITERATOR_AGE_THRESHOLD = Duration.minutes(5);
/** Name of the metric counting dead-lettered events (from the function's log lines), in the stage's namespace. */
export const DEAD_LETTER_METRIC = { name: 'BridgeEventsDeadLettered' } as const;
/** Wake-ups per retry invocation (each one letter, attempted at once). */
export const SINK_RETRY_BATCH_SIZE = 10;
/**
 * Retry invocations at once: the mapping's maximum concurrency (at least 2, Lambda's minimum) and
 * the function's reservation when one is asked for (infra/reserved-concurrency.ts), the local
 * queue's `AEP_BRIDGE_RETRY_CONCURRENCY` default, the same number.
 */
export const SINK_RETRY_CONCURRENCY = DEFAULT_RETRY_CONCURRENCY;
/** AWS guidance for an SQS event source: a visibility timeout of at least six times the function's timeout. */
export const SINK_RETRY_VISIBILITY = Duration.seconds(6 * SINK_RETRY_TIMEOUT_SECONDS);
/** The retry lane is behind when a wake-up waits longer than this past its delay. */
export const SINK_RETRY_AGE_THRESHOLD = Duration.minutes(15);

export interface RelayBridgesProps {
  /** The event log; must have a stream with new images. */
  events: ITable;
  /** Holds the sinks and the dead letters. */
  tenants: ITable;
  /** functions/bridges. */
  handler: LambdaFunction;
  handlerLogGroup: ILogGroup;
  /** functions/sinkretry: works the retry queue. */
  retryHandler: LambdaFunction;
  retryLogGroup: ILogGroup;
  /** functions/http: its admin routes seal secrets when sinks are set and schedule redrives. */
  admin: LambdaFunction;
  /** EventBridge bus ARNs tenants may name as sinks; empty: no EventBridge sinks, and no PutEvents grant. */
  eventBuses: readonly string[];
  /** The stage's namespace of the relay's own metrics (`relayMetricsNamespace`). */
  metricsNamespace: string;
  /** For the sink-secrets key and the failed-batch archive (`-c removalPolicy`). */
  removalPolicy: RemovalPolicy;
}

export class RelayBridges extends Construct {
  public readonly secretsKey: Key;
  public readonly eventSource: DynamoEventSource;
  /** Stream batches that still failed after every retry or outgrew the record age, with their records. */
  public readonly failedBatches: FailedBatchArchive;
  /** Wake-ups of the sink-retry function. */
  public readonly retryQueue: Queue;
  /** Wake-ups the sink-retry function failed on every receive. */
  public readonly retryFailures: Queue;
  public readonly retryEventSource: SqsEventSource;
  public readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: RelayBridgesProps) {
    super(scope, id);
    const { handler, admin, retryHandler } = props;
    // The key goes with the stack's removal policy: with the tenants table gone (destroy), the
    // secrets it sealed are gone too; kept (retain), the key must outlive the stack with them.
    this.secretsKey = new Key(this, 'SinkSecretsKey', { description: 'AEP relay: seals bridge sink secrets (OTLP headers, webhook signing secrets)', enableKeyRotation: true, removalPolicy: props.removalPolicy });
    // Sinks are set (sealed) by the admin routes; delivery and retries only open.
    // Exact actions: the sealer calls Encrypt and Decrypt only (src/store/kms-secret-sealer.ts).
    this.secretsKey.grant(admin, 'kms:Encrypt', 'kms:Decrypt');
    this.secretsKey.grant(handler, 'kms:Decrypt');
    this.secretsKey.grant(retryHandler, 'kms:Decrypt');
    // Sinks (src/store/bridge-sink-store.ts) and letters (dead-letter-store.ts) are items of the
    // tenants table: Get, Query, Put, Update, Delete; no batch, no scan.
    for (const fn of [handler, retryHandler]) grantTableActions(fn, [{ table: props.tenants, actions: [...ITEM_READS, ...ITEM_WRITES] }]);
    for (const fn of [handler, retryHandler, admin]) {
      fn.addEnvironment(BRIDGE_VARIABLES.kmsKeyId, this.secretsKey.keyArn);
      if (props.eventBuses.length > 0) {
        fn.addEnvironment(BRIDGE_VARIABLES.eventBuses, props.eventBuses.join(','));
        // Least privilege: PutEvents on the configured buses and nothing else. A cross-account
        // bus must also allow this account in its own resource policy.
        fn.addToRolePolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [...props.eventBuses] }));
      }
    }

    this.failedBatches = new FailedBatchArchive(this, 'FailedBatches', { removalPolicy: props.removalPolicy });
    this.eventSource = new DynamoEventSource(props.events, {
      // TRIM_HORIZON with a record-age cap. Bridges promise at-least-once (docs/bridges.md "Delivery"):
      // at LATEST, whatever is stored while the mapping is being created (the first deploy, a
      // re-created mapping) would never reach a sink. The trade-off: a mapping re-created on an
      // old stream resends up to BRIDGES_MAX_RECORD_AGE of events the sinks already had
      // (duplicates, which receivers drop by (source, id) as they must for any retry), and
      // archives the older part of the stream with the failed batches instead of sending it; a
      // consumer stalled longer than the cap archives what it could not send in time (the
      // records are in the archive, and the events in the log).
      startingPosition: StartingPosition[STREAM_STARTING_POSITIONS.bridges],
      maxRecordAge: BRIDGES_MAX_RECORD_AGE,
      batchSize: BRIDGES_BATCH_SIZE,
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      retryAttempts: BRIDGES_RETRY_ATTEMPTS,
      // One batch per shard at a time keeps each sink's events in stream order.
      parallelizationFactor: 1,
      onFailure: this.failedBatches,
      // Stored events only: redelivery markers are duplicates the sinks already had.
      filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT'), dynamodb: { NewImage: { kind: { S: FilterRule.isEqual('event') } } } })],
    });
    handler.addEventSource(this.eventSource);

    this.retryFailures = new Queue(this, 'SinkRetryFailures', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    this.retryQueue = new Queue(this, 'SinkRetryQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: SINK_RETRY_VISIBILITY,
      // The letters are the durable state (14 days in the store); a wake-up older than this is
      // one a redrive replaces.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.retryFailures, maxReceiveCount: SINK_RETRY_MAX_RECEIVES },
    });
    // The live lane (bridges), the retry worker (its own backoff) and redrive (admin routes)
    // wake the worker; SendMessageBatch is authorised by sqs:SendMessage. Nothing else.
    for (const fn of [handler, retryHandler, admin]) {
      fn.addEnvironment(BRIDGE_VARIABLES.retryQueueUrl, this.retryQueue.queueUrl);
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.retryQueue.queueArn] }));
    }
    this.retryEventSource = new SqsEventSource(this.retryQueue, { batchSize: SINK_RETRY_BATCH_SIZE, maxConcurrency: SINK_RETRY_CONCURRENCY, reportBatchItemFailures: true });
    // The mapping's maximum alone bounds the worker: Lambda's SQS poller never invokes more than
    // that at once, so no reservation is needed to keep retries from ingest and fan-out.
    retryHandler.addEventSource(this.retryEventSource);

    // The function logs one line per sink that dead-lettered events, with the count in `parked`.
    const deadLettered = new MetricFilter(this, 'DeadLetteredEvents', {
      logGroup: props.handlerLogGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', 'bridge events dead-lettered'),
      metricNamespace: props.metricsNamespace,
      metricName: DEAD_LETTER_METRIC.name,
      metricValue: '$.parked',
    });
    // The retry worker logs the same line when a letter's attempts are spent: one metric.
    new MetricFilter(this, 'RetryDeadLetteredEvents', {
      logGroup: props.retryLogGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', 'bridge events dead-lettered'),
      metricNamespace: props.metricsNamespace,
      metricName: DEAD_LETTER_METRIC.name,
      metricValue: '$.parked',
    });
    const alarm = (alarmId: string, description: string, metric: Metric, threshold: number): void => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.alarms.push(created);
    };
    const period = Duration.minutes(5);
    // No Errors alarm for either function here: observability.ts has one per function, and a
    // second on the same metric would notify every failure twice.
    alarm('DeadLettersAlarm', 'Bridge sinks refused events after every retry: list them with GET /admin/bridges/dead-letters and redrive', deadLettered.metric({ statistic: 'Sum', period }), 0);
    alarm('IteratorAgeAlarm', 'The bridges consumer is behind the event log stream', handler.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }), BRIDGES_ITERATOR_AGE_THRESHOLD.toMilliseconds());
    alarm('FailedRecordsAlarm', 'Stream batches the bridges could not handle after every retry (or that outgrew the record age) were archived in the failed-batch bucket', this.failedBatches.metricFailedBatches(period), 0);
    alarm('RetryBacklogAlarm', 'Sink-retry wake-ups wait long past their delay: the retry lane is behind (dead sinks fill it; see the dead-letter listing)', this.retryQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(1) }), SINK_RETRY_AGE_THRESHOLD.toSeconds());
    alarm('RetryFailuresAlarm', 'Sink-retry wake-ups failed on every receive and are in the retry DLQ; their letters are redrivable', this.retryFailures.metricApproximateNumberOfMessagesVisible({ period }), 0);
  }
}
