/**
 * Delivers one batch of stream records to the fan-out function the way a Lambda event source
 * mapping for DynamoDB Streams does when configured with `ReportBatchItemFailures`,
 * `BisectBatchOnFunctionError`, a bounded `MaximumRetryAttempts` and an on-failure destination
 * ("Configuring partial batch response with DynamoDB and Lambda", "Lambda parameters for
 * Amazon DynamoDB event source mappings"):
 * - An empty or absent `batchItemFailures` is success: everything up to the batch's end is checkpointed.
 * - Reported failures checkpoint the records before the failed one with the lowest sequence
 *   number, and the retry resends that record and everything after it (records before it are
 *   not sent again). A failure naming no record of the batch counts as a whole-batch failure.
 * - A thrown error (or the fault hook throwing) fails the whole batch; with bisection on, the
 *   batch is split in two and each half retried in order, which does not use up retries.
 * - Past `maxRetries` retries, the records still failing are discarded: they go to the
 *   on-failure destination and the shard moves on.
 */
import { randomUUID } from 'node:crypto';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { lambdaContext } from './lambda-context.ts';

/** The fan-out handler (`functions/fanout`). */
export type FanoutHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | undefined>;

/**
 * What the on-failure destination receives for discarded records: Lambda's invocation record
 * for a stream source (`requestContext`, `responseContext`, `DDBStreamBatchInfo`), plus the
 * discarded records themselves, as the deployed S3 destinations get them ("for Amazon S3
 * destinations, Lambda also sends the entire invocation record along with the metadata",
 * Lambda Developer Guide; an SQS or SNS destination gets the coordinates only). The field that
 * holds the records in the S3 object is not named by that guide: `records` here is ours.
 */
export interface StreamBatchFailure {
  requestContext: { requestId: string; functionArn: string; condition: 'RetryAttemptsExhausted'; approximateInvokeCount: number };
  responseContext: { statusCode: number; executedVersion: string; functionError?: 'Unhandled' };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
  records: DynamoDBRecord[];
}

export interface BatchDeliveryOptions {
  handler: FanoutHandler;
  functionName: string;
  /**
   * The function timeout (ms): reported by the context and enforced, as Lambda does. An
   * invocation still running when it passes counts as a function error (retried, bisected); the
   * handler's promise is left to settle unobserved, since a process cannot stop it.
   */
  functionTimeoutMs: number;
  maxRetries: number;
  bisectOnError: boolean;
  /** First retry waits this long; each further retry doubles it, up to `retryMaxDelayMs`. */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  shardId: string;
  streamArn: string;
  /** Fault hook for tests: runs before each invocation; a throw counts as a function error. */
  beforeInvoke?: (event: DynamoDBStreamEvent) => void | Promise<void>;
  onFailure: (failure: StreamBatchFailure) => void;
  /** Called with each record once it and every record before it are done (delivered or discarded). */
  checkpoint: (record: DynamoDBRecord) => void;
  /** True once the poller is stopping: no further invocation starts. */
  stopping: () => boolean;
  /** Waits, or returns early when the poller stops. */
  sleep: (ms: number) => Promise<void>;
}

/** One part of the batch still to deliver, with the retries it has used. */
interface Segment {
  records: DynamoDBRecord[];
  retries: number;
  invocations: number;
}

type Outcome = { kind: 'success' } | { kind: 'partial'; firstFailed: number } | { kind: 'error' };

/** Delivers `records` in order. Resolves `true` once all are done, `false` if the poller stopped first. */
export async function deliverBatch(records: DynamoDBRecord[], options: BatchDeliveryOptions): Promise<boolean> {
  const queue: Segment[] = [{ records, retries: 0, invocations: 0 }];
  while (queue.length > 0) {
    if (options.stopping()) return false;
    const segment = queue[0] as Segment;
    const outcome = await invokeOnce(segment.records, options);
    segment.invocations += 1;
    if (outcome.kind === 'success') {
      options.checkpoint(segment.records[segment.records.length - 1] as DynamoDBRecord);
      queue.shift();
      continue;
    }
    if (outcome.kind === 'partial') {
      if (outcome.firstFailed > 0) options.checkpoint(segment.records[outcome.firstFailed - 1] as DynamoDBRecord);
      segment.records = segment.records.slice(outcome.firstFailed);
    } else if (options.bisectOnError && segment.records.length > 1) {
      const middle = Math.ceil(segment.records.length / 2);
      queue.splice(
        0,
        1,
        { records: segment.records.slice(0, middle), retries: segment.retries, invocations: segment.invocations },
        { records: segment.records.slice(middle), retries: segment.retries, invocations: 0 },
      );
      continue;
    }
    if (segment.retries >= options.maxRetries) {
      options.onFailure(failureRecord(segment, options, outcome.kind === 'error'));
      options.checkpoint(segment.records[segment.records.length - 1] as DynamoDBRecord);
      queue.shift();
      continue;
    }
    segment.retries += 1;
    await options.sleep(Math.min(options.retryMaxDelayMs, options.retryBaseDelayMs * 2 ** (segment.retries - 1)));
  }
  return true;
}

async function invokeOnce(records: DynamoDBRecord[], options: BatchDeliveryOptions): Promise<Outcome> {
  // Each invocation gets its own copy of the JSON Lambda would send, so a handler cannot alter a retry's input.
  const event = JSON.parse(JSON.stringify({ Records: records })) as DynamoDBStreamEvent;
  let response: DynamoDBBatchResponse | undefined;
  try {
    await options.beforeInvoke?.(event);
    response = await withTimeout(options.handler(event, lambdaContext(options.functionName, options.functionTimeoutMs)), options.functionTimeoutMs);
  } catch {
    return { kind: 'error' };
  }
  const failures = response?.batchItemFailures ?? [];
  if (failures.length === 0) return { kind: 'success' };
  let firstFailed = records.length;
  for (const failure of failures) {
    const index = records.findIndex((record) => record.dynamodb?.SequenceNumber === failure?.itemIdentifier);
    // An empty, null or unknown identifier makes Lambda treat the whole batch as failed.
    if (typeof failure?.itemIdentifier !== 'string' || failure.itemIdentifier === '' || index === -1) return { kind: 'error' };
    firstFailed = Math.min(firstFailed, index);
  }
  return { kind: 'partial', firstFailed };
}

class FunctionTimeout extends Error {}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionTimeout(`Task timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function failureRecord(segment: Segment, options: BatchDeliveryOptions, functionError: boolean): StreamBatchFailure {
  const first = segment.records[0];
  const last = segment.records[segment.records.length - 1];
  const arrival = (record: DynamoDBRecord | undefined) => new Date((record?.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString();
  return {
    requestContext: {
      requestId: randomUUID(),
      functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${options.functionName}`,
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: segment.invocations,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', ...(functionError ? { functionError: 'Unhandled' as const } : {}) },
    version: '1.0',
    timestamp: new Date().toISOString(),
    DDBStreamBatchInfo: {
      shardId: options.shardId,
      startSequenceNumber: first?.dynamodb?.SequenceNumber ?? '',
      endSequenceNumber: last?.dynamodb?.SequenceNumber ?? '',
      approximateArrivalOfFirstRecord: arrival(first),
      approximateArrivalOfLastRecord: arrival(last),
      batchSize: segment.records.length,
      streamArn: options.streamArn,
    },
    records: segment.records,
  };
}
