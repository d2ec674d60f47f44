/**
 * Fan-out: the event log's DynamoDB Stream drives the fanout function, which posts new
 * events to WebSocket subscribers. Lambda's default for a stream source is to retry a
 * failing batch until the records expire (24 h), blocking the shard all that time
 * (DESIGN.md, "AWS facts"); here failures are bounded, split, reported per record and
 * parked in a queue.
 */
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** How many times a failing batch (or, bisected, part of it) is retried before it is parked. */
export const FANOUT_RETRY_ATTEMPTS = 5;
/** Older records are no longer "live": they are parked instead of delivered late. */
export const FANOUT_MAX_RECORD_AGE = Duration.hours(1);
/** Records per invocation; fan-out reads subscriptions once per batch, not per event. */
export const FANOUT_BATCH_SIZE = 100;

export interface RelayFanoutProps {
  /** The event log; must have a stream with new images. */
  events: ITable;
  /** functions/fanout. */
  handler: IFunction;
}

export class RelayFanout extends Construct {
  /** Where records land that still fail after every retry (the stream keeps them only 24 h). */
  public readonly failedRecords: Queue;
  public readonly eventSource: DynamoEventSource;

  constructor(scope: Construct, id: string, props: RelayFanoutProps) {
    super(scope, id);
    this.failedRecords = new Queue(this, 'FailedRecords', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The maximum: time to look at a failure before it is gone.
      retentionPeriod: Duration.days(14),
    });
    this.eventSource = new DynamoEventSource(props.events, {
      // LATEST, not TRIM_HORIZON. On a new stack both are empty. When the mapping is ever
      // replaced, TRIM_HORIZON would re-post up to 24 h of old events as if they were live
      // (and age them straight into the queue); with LATEST what happened in the gap is
      // still in the log, where consumers resume by position (AEP-0003 replay).
      startingPosition: StartingPosition.LATEST,
      batchSize: FANOUT_BATCH_SIZE,
      // The handler answers batchItemFailures: only the failed record and those after it
      // in its shard are retried, not the whole batch.
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      retryAttempts: FANOUT_RETRY_ATTEMPTS,
      maxRecordAge: FANOUT_MAX_RECORD_AGE,
      // One batch per shard: above 1, Lambda keeps order per item (partition and sort key) only
      // (Lambda Developer Guide, DynamoDB streams), so two events of one session could run in
      // two invocations at once. Session order does not depend on it (every order write is
      // conditional), but at 1 a session's batches come one after another, as the order lane
      // expects, and nothing in fan-out waits, so a gapped session holds up no other.
      parallelizationFactor: 1,
      onFailure: new SqsDlq(this.failedRecords),
      // Only inserts of deliverable items invoke the function (events and redelivery markers),
      // and the writes of an order state while it holds events (`wakeAt` set): that record is
      // the wake-up that releases a gapped session once its wait is over, without holding the
      // batch (src/store/session-order-store.ts). Session registry updates, other order writes
      // and TTL deletions are dropped at no invocation cost (functions/fanout re-checks anyway).
      filters: [
        FilterCriteria.filter({
          eventName: FilterRule.isEqual('INSERT'),
          dynamodb: { NewImage: { kind: { S: FilterRule.or('event', 'redelivery') } } },
        }),
        FilterCriteria.filter({
          eventName: FilterRule.or('INSERT', 'MODIFY'),
          dynamodb: { NewImage: { kind: { S: FilterRule.isEqual('order') }, wakeAt: { N: FilterRule.exists() } } },
        }),
      ],
    });
    props.handler.addEventSource(this.eventSource);
  }
}
