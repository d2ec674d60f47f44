/**
 * Fan-out: the event log's DynamoDB Stream drives the fanout function, which posts new
 * events to WebSocket subscribers. Lambda's default for a stream source is to retry a
 * failing batch until the records expire (24 h), blocking the shard all that time
 * (DESIGN.md, "AWS facts"); here failures are bounded, split, reported per record and the
 * batches given up on are archived whole in S3 (`failed-batch-archive.ts`).
 */
import { Duration } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { STREAM_STARTING_POSITIONS } from '../../src/config/stream-mappings.ts';
import { FailedBatchArchive } from './failed-batch-archive.ts';

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
  /** For the failed-batch archive. */
  removalPolicy: RemovalPolicy;
}

export class RelayFanout extends Construct {
  /**
   * Where the batches land that still fail after every retry or outgrow the record age, with
   * their records (the stream keeps them only 24 h).
   */
  public readonly failedBatches: FailedBatchArchive;
  public readonly eventSource: DynamoEventSource;

  constructor(scope: Construct, id: string, props: RelayFanoutProps) {
    super(scope, id);
    this.failedBatches = new FailedBatchArchive(this, 'FailedBatches', { removalPolicy: props.removalPolicy });
    this.eventSource = new DynamoEventSource(props.events, {
      // TRIM_HORIZON, capped by the record age. LATEST would skip what is stored while the
      // mapping is being created (the first deploy, or a mapping ever re-created). The order
      // lane does adopt such events from the log (AEP_ORDER_ADOPT_MS, docs/protocol-and-guarantees.md
      // "What the AWS side must give"), but only when a later record of the same emitter's session arrives: a
      // session that goes quiet right after would keep them above its release point, out of
      // live delivery and out of replay, until its next event. TRIM_HORIZON reads them. Its
      // cost falls on a mapping re-created on an old stream: it reads the stream from its
      // oldest record, but the order lane does not deliver again a record at or below a release
      // point outside its holes (seen before; one in a hole it has forgotten goes out as late, a
      // duplicate consumers drop by (source, id)), so the last hour costs reading, not a flood of
      // duplicates; records older than FANOUT_MAX_RECORD_AGE are discarded into the failed-batch
      // archive (its alarm fires once; the old mapping had delivered those events).
      startingPosition: StartingPosition[STREAM_STARTING_POSITIONS.fanout],
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
      onFailure: this.failedBatches,
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
