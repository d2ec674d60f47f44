/**
 * The local stand-in for Lambda's DynamoDB Streams event source mapping on the events table:
 * finds the table's stream, follows its shards (new child shards included), reads each with
 * `GetRecords`, drops what the filter criteria exclude, and hands the rest to the fan-out
 * handler in order, one batch in flight per shard, with the retry, bisection and
 * on-failure-destination behaviour of `stream-batch-delivery.ts`.
 *
 * Like the event source mapping it starts at its starting position (`LATEST` unless told
 * `TRIM_HORIZON`, as the relay's two mappings are: src/config/stream-mappings.ts) for the shards
 * that exist when it first starts, and reads shards that appear later from `TRIM_HORIZON`, a child only once its
 * parent is fully read (the order per item key survives a shard split). It keeps a checkpoint
 * (the last done sequence number) per shard, so a stop and a start resume
 * `AFTER_SEQUENCE_NUMBER` and lose nothing written in between. With `checkpointFile` it keeps
 * them on disk too, as the mapping keeps its position whatever happens to the function: a stack
 * killed and started again on the same data goes on where it was (at least once), instead of
 * starting over at its starting position. The mapping's maximum record age is not modelled.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { GetRecordsOutput, ShardIteratorType } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { FANOUT_TIMEOUT_SECONDS } from '../src/config/function-timeouts.ts';
import type { StreamStartingPosition } from '../src/config/stream-mappings.ts';
import { deliverBatch } from './stream-batch-delivery.ts';
import type { FanoutHandler, StreamBatchFailure } from './stream-batch-delivery.ts';
import { lambdaRecordOf, passesFanoutFilter } from './stream-records.ts';

export interface StreamPollerOptions {
  dynamoEndpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The table whose stream is read (the events table). */
  tableName: string;
  handler: FanoutHandler;
  /** Wait between `GetRecords` calls on a shard that had nothing more (ms). Default 100 (Lambda polls about 4 times a second). */
  pollIntervalMs?: number;
  /** Most records per `GetRecords` call, and so per invocation. Default 100, the mapping's default. */
  batchSize?: number;
  /** Retries of a failing batch before its records are discarded. Default 3. */
  maxRetries?: number;
  /** `BisectBatchOnFunctionError`. Default true. */
  bisectOnError?: boolean;
  /** First retry delay (ms), doubled per retry. Default 200. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** How often the shard list is re-read for new (child) shards (ms). Default 1000. */
  shardDiscoveryMs?: number;
  /** Where a new stream is first read (the mapping's `StartingPosition`). Default LATEST. */
  startingPosition?: StreamStartingPosition;
  /** The mapping's filter criteria. Default: the fan-out filter (INSERTs of kind `event` or `redelivery`). */
  filter?: (record: DynamoDBRecord) => boolean;
  /** The on-failure destination: receives what is discarded after the last retry. */
  onFailure: (failure: StreamBatchFailure) => void;
  /** The fan-out function's timeout (ms), enforced: default the deployed one. */
  functionTimeoutMs?: number;
  /** Fault hook for tests; a throw counts as a function error. */
  beforeInvoke?: (event: { Records: DynamoDBRecord[] }) => void | Promise<void>;
  /** Where the shard checkpoints are kept across restarts (absent: in memory only). */
  checkpointFile?: string;
  /** Reports read errors (they are retried, never thrown). */
  log?: (message: string, detail: Record<string, unknown>) => void;
}

/** A running (or stopped, restartable) stream poller. */
export interface StreamPoller {
  /** Resolves once every readable shard has an iterator, so a write after it is delivered. */
  start(): Promise<void>;
  /** Resolves after each shard's in-flight batch; retries still pending are dropped and redone on the next start. */
  stop(): Promise<void>;
}

interface ShardState {
  shardId: string;
  parentShardId?: string;
  /** The starting position for shards that existed at the first start, TRIM_HORIZON for those found later. */
  initialPosition: 'LATEST' | 'TRIM_HORIZON';
  /** Sequence number of the last record done (delivered, filtered out or discarded). */
  checkpoint?: string;
  /** Iterator where the unfinished part of the shard begins; used on restart when there is no checkpoint yet. */
  resumeIterator?: string;
  /** The shard is closed and every record in it is done. */
  finished: boolean;
  /** The read loop, while one runs. */
  loop?: Promise<void>;
}

export function createStreamPoller(options: StreamPollerOptions): StreamPoller {
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const batchSize = options.batchSize ?? 100;
  const shardDiscoveryMs = options.shardDiscoveryMs ?? 1000;
  const filter = options.filter ?? passesFanoutFilter;
  const log = options.log ?? ((message, detail) => console.error(JSON.stringify({ level: 'error', component: 'local-stream-poller', message, ...detail })));
  const shards = new Map<string, ShardState>();
  let streamArn: string | undefined;
  let running = false;
  let stopping = false;
  let abort = new AbortController();
  let discovery: Promise<void> | undefined;
  let streams: DynamoDBStreamsClient | undefined;

  /** Waits `ms`, or less if the poller stops meanwhile. */
  const pause = async (ms: number): Promise<void> => {
    try {
      await sleep(ms, undefined, { signal: abort.signal });
    } catch {
      // Aborted by stop().
    }
  };

  /** Writes the checkpoints down (whole file, renamed into place, so a kill leaves the old or the new one). */
  const persist = (): void => {
    if (options.checkpointFile === undefined || streamArn === undefined) return;
    const saved: SavedCheckpoints = { streamArn, shards: Object.fromEntries([...shards.values()].map((shard) => [shard.shardId, shard.checkpoint ?? null])) };
    const temporary = `${options.checkpointFile}.tmp`;
    writeFileSync(temporary, JSON.stringify(saved));
    renameSync(temporary, options.checkpointFile);
  };

  /** The checkpoints a previous run of this poller left for `arn`, if any. */
  const saved = (arn: string): SavedCheckpoints | undefined => {
    if (options.checkpointFile === undefined || !existsSync(options.checkpointFile)) return undefined;
    try {
      const parsed = JSON.parse(readFileSync(options.checkpointFile, 'utf8')) as SavedCheckpoints;
      return parsed.streamArn === arn && typeof parsed.shards === 'object' && parsed.shards !== null ? parsed : undefined;
    } catch {
      return undefined;
    }
  };

  const client = (): DynamoDBStreamsClient =>
    (streams ??= new DynamoDBStreamsClient({ region: options.region, endpoint: options.dynamoEndpoint, credentials: options.credentials }));

  const iteratorAt = async (shard: ShardState, type: ShardIteratorType, sequenceNumber?: string): Promise<string | undefined> => {
    const output = await client().send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shard.shardId,
        ShardIteratorType: type,
        ...(sequenceNumber === undefined ? {} : { SequenceNumber: sequenceNumber }),
      }),
    );
    return output.ShardIterator;
  };

  /** Where a shard's reading (re)starts: after its checkpoint, else where it stopped, else its initial position. */
  const position = async (shard: ShardState): Promise<string | undefined> => {
    if (shard.checkpoint !== undefined) return iteratorAt(shard, 'AFTER_SEQUENCE_NUMBER', shard.checkpoint);
    if (shard.resumeIterator !== undefined) return shard.resumeIterator;
    return iteratorAt(shard, shard.initialPosition);
  };

  /** After an expired iterator or trimmed data: the checkpoint if it is still readable, else the oldest record (at least once, never lost). */
  const reposition = async (shard: ShardState): Promise<string | undefined> => {
    if (shard.checkpoint !== undefined) {
      try {
        return await iteratorAt(shard, 'AFTER_SEQUENCE_NUMBER', shard.checkpoint);
      } catch (error) {
        if (!isErrorNamed(error, 'TrimmedDataAccessException')) throw error;
      }
    }
    return iteratorAt(shard, 'TRIM_HORIZON');
  };

  const readable = (shard: ShardState): boolean => {
    if (shard.finished || shard.loop !== undefined) return false;
    const parent = shard.parentShardId === undefined ? undefined : shards.get(shard.parentShardId);
    // A parent this poller never saw is gone from the stream (trimmed), so nothing is left to wait for.
    return parent === undefined || parent.finished;
  };

  const readShard = async (shard: ShardState, firstIterator: string | undefined): Promise<void> => {
    let iterator = firstIterator;
    while (!stopping) {
      let page: GetRecordsOutput;
      try {
        if (iterator === undefined) iterator = await position(shard);
        if (iterator === undefined) break;
        page = await client().send(new GetRecordsCommand({ ShardIterator: iterator, Limit: batchSize }));
      } catch (error) {
        if (isErrorNamed(error, 'ExpiredIteratorException') || isErrorNamed(error, 'TrimmedDataAccessException')) {
          iterator = await reposition(shard).catch(() => undefined);
        } else {
          log('GetRecords failed', { shardId: shard.shardId, error: String(error) });
        }
        await pause(pollIntervalMs);
        continue;
      }
      const fetched = (page.Records ?? []).map((record) => lambdaRecordOf(record, streamArn ?? ''));
      if (fetched.length > 0) {
        const batch = fetched.filter(filter);
        const done =
          batch.length === 0 ||
          (await deliverBatch(batch, {
            handler: options.handler,
            functionName: 'aep-relay-fanout',
            functionTimeoutMs: options.functionTimeoutMs ?? FANOUT_TIMEOUT_SECONDS * 1000,
            maxRetries: options.maxRetries ?? 3,
            bisectOnError: options.bisectOnError ?? true,
            retryBaseDelayMs: options.retryBaseDelayMs ?? 200,
            retryMaxDelayMs: options.retryMaxDelayMs ?? 5_000,
            shardId: shard.shardId,
            streamArn: streamArn ?? '',
            ...(options.beforeInvoke === undefined ? {} : { beforeInvoke: options.beforeInvoke }),
            onFailure: options.onFailure,
            checkpoint: (record) => {
              if (record.dynamodb?.SequenceNumber !== undefined) shard.checkpoint = record.dynamodb.SequenceNumber;
              persist();
            },
            stopping: () => stopping,
            sleep: pause,
          }));
        // Stopped mid-batch: the checkpoint marks what is done; the rest is read again on the next start.
        if (!done) break;
        const lastSequenceNumber = fetched[fetched.length - 1]?.dynamodb?.SequenceNumber;
        if (lastSequenceNumber !== undefined) shard.checkpoint = lastSequenceNumber;
        persist();
      }
      if (page.NextShardIterator === undefined) {
        // A closed shard read to its end: its children may start.
        shard.finished = true;
        startReadableShards();
        break;
      }
      iterator = page.NextShardIterator;
      shard.resumeIterator = iterator;
      if (fetched.length < batchSize) await pause(pollIntervalMs);
    }
  };

  const launch = (shard: ShardState, firstIterator: string | undefined): void => {
    shard.loop = readShard(shard, firstIterator)
      .catch((error: unknown) => log('shard reader failed', { shardId: shard.shardId, error: String(error) }))
      .finally(() => {
        shard.loop = undefined;
      });
  };

  const startReadableShards = (): void => {
    if (stopping) return;
    for (const shard of shards.values()) if (readable(shard)) launch(shard, undefined);
  };

  /** Reads the shard list; shards not seen before are recorded with `initialPosition`. */
  const discoverShards = async (initialPosition: ShardState['initialPosition']): Promise<void> => {
    let exclusiveStartShardId: string | undefined;
    do {
      const output = await client().send(
        new DescribeStreamCommand({ StreamArn: streamArn, ...(exclusiveStartShardId === undefined ? {} : { ExclusiveStartShardId: exclusiveStartShardId }) }),
      );
      for (const described of output.StreamDescription?.Shards ?? []) {
        if (described.ShardId === undefined || shards.has(described.ShardId)) continue;
        const closed = described.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        shards.set(described.ShardId, {
          shardId: described.ShardId,
          ...(described.ParentShardId === undefined ? {} : { parentShardId: described.ParentShardId }),
          initialPosition,
          // LATEST on a shard that is already closed has nothing to read.
          finished: initialPosition === 'LATEST' && closed,
        });
      }
      exclusiveStartShardId = output.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
  };

  const discoverForever = async (): Promise<void> => {
    while (!stopping) {
      await pause(shardDiscoveryMs);
      if (stopping) break;
      try {
        await discoverShards('TRIM_HORIZON');
        startReadableShards();
      } catch (error) {
        log('DescribeStream failed', { error: String(error) });
      }
    }
  };

  return {
    async start() {
      if (running) return;
      running = true;
      stopping = false;
      abort = new AbortController();
      const dynamo = createDynamoClient({ region: options.region, endpoint: options.dynamoEndpoint, credentials: options.credentials });
      let latestStreamArn: string | undefined;
      try {
        latestStreamArn = (await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }))).Table?.LatestStreamArn;
      } finally {
        dynamo.destroy();
      }
      if (latestStreamArn === undefined) throw new Error(`table ${options.tableName} has no stream`);
      const previousRun = streamArn === undefined ? saved(latestStreamArn) : undefined;
      if (previousRun !== undefined) {
        // A new process on the stream a previous run read: its checkpoints, and every shard
        // without one (it had done nothing there, or appeared since) from its oldest record.
        shards.clear();
        streamArn = latestStreamArn;
        await discoverShards('TRIM_HORIZON');
        for (const shard of shards.values()) {
          const checkpoint = previousRun.shards[shard.shardId];
          if (typeof checkpoint === 'string') shard.checkpoint = checkpoint;
        }
      } else if (latestStreamArn !== streamArn) {
        // First start, or the table was re-created: a new stream, nothing to resume.
        shards.clear();
        streamArn = latestStreamArn;
        await discoverShards(options.startingPosition ?? 'LATEST');
        persist();
      } else {
        await discoverShards('TRIM_HORIZON');
      }
      // Iterators are taken before start() resolves, so LATEST is fixed before the caller writes.
      for (const shard of shards.values()) {
        if (!readable(shard)) continue;
        // On failure the read loop positions the shard itself (and logs why).
        const iterator = await position(shard).catch(() => undefined);
        shard.resumeIterator ??= iterator;
        launch(shard, iterator);
      }
      discovery = discoverForever();
    },
    async stop() {
      if (!running) return;
      stopping = true;
      abort.abort();
      await discovery;
      await Promise.all([...shards.values()].map((shard) => shard.loop));
      streams?.destroy();
      streams = undefined;
      running = false;
    },
  };
}

/** What `checkpointFile` holds: per shard of one stream, the last sequence number done (null: none yet). */
interface SavedCheckpoints {
  streamArn: string;
  shards: Record<string, string | null>;
}

function isErrorNamed(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}
