/**
 * Lambda's event source mapping for a DynamoDB stream, as the fan-out mapping is configured in
 * `infra/constructs/fanout.ts` and as the Lambda Developer Guide describes it:
 * - each shard is polled (about four times a second) and read from its checkpoint; one batch
 *   per shard is in flight (parallelization factor 1); a child shard is read once its parent is
 *   read to the end;
 * - the filter criteria drop records before any invocation (they count as processed);
 * - a batch holds up to `batchSize` records; the invocation has the function's timeout, and a
 *   timed-out invocation is an error whose work goes on running (`LambdaFunction`);
 * - `ReportBatchItemFailures`: the records before the lowest reported one are done, and the
 *   retry reads again from that record (a retry may carry records the failed batch did not);
 * - a function error bisects the batch (`BisectBatchOnFunctionError`), each half retried on its
 *   own, which does not spend retries; past `maxRetries` retries the records still failing are
 *   discarded to the on-failure destination and the shard moves on;
 * - records older than `maxRecordAgeMs` when their turn comes are discarded without ever
 *   failing;
 * - at least once: a batch that succeeded may be invoked again.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';
import type { ShardRecord, SimulatedStream, StreamShard } from './simulated-stream.ts';
import { copied } from '../kernel/copy.ts';

export interface MappingSettings {
  batchSize: number;
  maxRetries: number;
  maxRecordAgeMs: number;
  bisectOnError: boolean;
  pollIntervalMs: number;
  functionTimeoutMs: number;
}

export interface MappingFaults {
  /** Whether this successful invocation is delivered again (at least once). */
  duplicateInvocation: () => boolean;
  /** Whether this record is discarded as over its maximum age (standing in for an hour's lag). */
  overAge: (record: DynamoDBRecord) => boolean;
}

export type InvokeOutcome = { kind: 'returned'; response: DynamoDBBatchResponse | undefined } | { kind: 'error' };

export interface MappingOptions {
  time: VirtualTime;
  random: Random;
  stream: SimulatedStream;
  settings: MappingSettings;
  filter: (record: DynamoDBRecord) => boolean;
  /** Invokes the function with the batch (the timeout is enforced by the caller, `LambdaFunction`). */
  invoke: (records: DynamoDBRecord[]) => Promise<InvokeOutcome>;
  faults: MappingFaults;
  /** The on-failure destination. */
  onDiscard: (records: readonly ShardRecord[], why: 'retries' | 'age') => void;
  /** Stops polling once true (after the schedule's end). */
  stopped: () => boolean;
}

export class EventSourceMapping {
  private readonly finished = new Set<string>();
  private readonly started = new Set<string>();

  constructor(private readonly options: MappingOptions) {}

  /** Starts polling every shard that exists now and every child as it becomes readable. */
  start(): void {
    this.launchReadable();
  }

  private launchReadable(): void {
    for (const shard of this.options.stream.shards) {
      if (this.started.has(shard.id)) continue;
      if (shard.parentId !== undefined && !this.finished.has(shard.parentId)) continue;
      this.started.add(shard.id);
      void this.poll(shard);
    }
  }

  private async poll(shard: StreamShard): Promise<void> {
    const { time, random, settings } = this.options;
    let checkpoint = 0;
    while (!this.options.stopped()) {
      // Children appear while reading: start those whose parent is done.
      this.launchReadable();
      const readable = this.options.stream.readable(shard, checkpoint, Number.POSITIVE_INFINITY);
      if (readable.length === 0) {
        if (shard.closed && checkpoint >= shard.records.length) {
          this.finished.add(shard.id);
          this.launchReadable();
          return;
        }
        await time.sleep(settings.pollIntervalMs * (0.75 + random.next() / 2));
        continue;
      }
      // Filtered-out records are done without an invocation; the batch is the next `batchSize` that pass.
      const batch: ShardRecord[] = [];
      let scanned = 0;
      for (const entry of readable) {
        scanned += 1;
        if (this.options.filter(entry.record)) batch.push(entry);
        if (batch.length >= settings.batchSize) break;
      }
      if (batch.length === 0) {
        checkpoint += scanned;
        continue;
      }
      checkpoint = await this.deliver(shard, checkpoint, batch);
    }
  }

  /** One batch through to done (success, or retried, bisected and at last discarded); answers the shard index after the last record it handled. */
  private async deliver(shard: StreamShard, checkpoint: number, first: ShardRecord[]): Promise<number> {
    const { time, settings, faults } = this.options;
    const queue: Array<{ entries: ShardRecord[]; retries: number }> = [{ entries: first, retries: 0 }];
    let through = shard.records.indexOf(first[first.length - 1] as ShardRecord, checkpoint);
    while (queue.length > 0) {
      const segment = queue[0] as { entries: ShardRecord[]; retries: number };
      // Records past the maximum age are discarded before the invocation, failed or not.
      const aged = segment.entries.filter((entry) => time.now() - entry.writtenAtMs > settings.maxRecordAgeMs || faults.overAge(entry.record));
      if (aged.length > 0) {
        this.options.onDiscard(aged, 'age');
        segment.entries = segment.entries.filter((entry) => !aged.includes(entry));
        if (segment.entries.length === 0) {
          queue.shift();
          continue;
        }
      }
      const outcome = await this.options.invoke(segment.entries.map((entry) => copied(entry.record)));
      const failedAt = this.firstFailed(segment.entries, outcome);
      if (failedAt === undefined) {
        if (faults.duplicateInvocation()) void this.options.invoke(segment.entries.map((entry) => copied(entry.record)));
        queue.shift();
        continue;
      }
      if (failedAt === 'error' && settings.bisectOnError && segment.entries.length > 1) {
        const middle = Math.ceil(segment.entries.length / 2);
        queue.splice(0, 1, { entries: segment.entries.slice(0, middle), retries: segment.retries }, { entries: segment.entries.slice(middle), retries: segment.retries });
        continue;
      }
      if (typeof failedAt === 'number') {
        // The records before the reported one are done; the retry reads again from it, and
        // (for the segment the shard's reading stopped at) may pick up records read since.
        const from = segment.entries.slice(failedAt);
        if (queue.length === 1 && from[0] !== undefined) {
          segment.entries = this.reread(shard, from[0], checkpoint);
          through = Math.max(through, shard.records.indexOf(segment.entries[segment.entries.length - 1] as ShardRecord, checkpoint));
        } else segment.entries = from;
      }
      if (segment.retries >= settings.maxRetries) {
        this.options.onDiscard(segment.entries, 'retries');
        queue.shift();
        continue;
      }
      segment.retries += 1;
      await time.sleep(Math.min(5_000, 200 * 2 ** (segment.retries - 1)));
    }
    return through + 1;
  }

  /** The retried part, read again from the shard: from the failed record, a batch's worth of what passes the filter now. */
  private reread(shard: StreamShard, start: ShardRecord, checkpoint: number): ShardRecord[] {
    const readable = this.options.stream.readable(shard, shard.records.indexOf(start, checkpoint), Number.POSITIVE_INFINITY);
    return readable.filter((entry) => this.options.filter(entry.record)).slice(0, this.options.settings.batchSize);
  }

  private firstFailed(entries: readonly ShardRecord[], outcome: InvokeOutcome): number | 'error' | undefined {
    if (outcome.kind === 'error') return 'error';
    const failures = outcome.response?.batchItemFailures ?? [];
    if (failures.length === 0) return undefined;
    let lowest = entries.length;
    for (const failure of failures) {
      const index = entries.findIndex((entry) => entry.record.dynamodb?.SequenceNumber === failure.itemIdentifier);
      // An identifier naming no record of the batch fails the batch whole.
      if (index === -1) return 'error';
      lowest = Math.min(lowest, index);
    }
    return lowest;
  }
}
