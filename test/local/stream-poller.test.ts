/**
 * The local stream poller against a DynamoDB Local of its own (in memory): Lambda's event
 * shape, filter criteria, partial batch responses, bisection, the on-failure destination, and
 * restarts that lose nothing.
 *
 * Batches are made deterministic by writing while the poller is stopped: on the next start the
 * first `GetRecords` returns everything written meanwhile in one batch.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeTableCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { createTables, localTableNames } from '../../local/create-tables.ts';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import type { DynamoDbLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import type { StreamBatchFailure } from '../../local/stream-batch-delivery.ts';
import { createStreamPoller } from '../../local/stream-poller.ts';
import type { StreamPoller, StreamPollerOptions } from '../../local/stream-poller.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';

let dynamo: DynamoDbLocal;
let client: DynamoDBClient;
let tableCount = 0;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({});
  client = createDynamoClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: LOCAL_CREDENTIALS });
});

afterAll(async () => {
  client?.destroy();
  await dynamo?.stop();
});

interface Harness {
  table: string;
  poller: StreamPoller;
  /** Every invocation's records, in invocation order. */
  invocations: DynamoDBRecord[][];
  failures: StreamBatchFailure[];
  /** Writes an item of `kind` with sort key `id`. */
  put(id: string, kind?: string, extra?: Record<string, { S: string }>): Promise<void>;
  /** Another poller on the same table, options and handler, sharing nothing in memory with `poller` (a restarted process). */
  newPoller(): StreamPoller;
  /** Sort keys of the records of every invocation. */
  ids(): string[][];
  stop(): Promise<void>;
}

type Behaviour = (event: DynamoDBStreamEvent, invocation: number) => Promise<DynamoDBBatchResponse | undefined>;

async function harness(behaviour: Behaviour = async () => ({ batchItemFailures: [] }), options: Partial<StreamPollerOptions> = {}): Promise<Harness> {
  tableCount += 1;
  const names = localTableNames(`poller-${tableCount}`);
  await createTables(client, names);
  const invocations: DynamoDBRecord[][] = [];
  const failures: StreamBatchFailure[] = [];
  const newPoller = () => createStreamPoller({
    dynamoEndpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    tableName: names.events,
    pollIntervalMs: 20,
    retryBaseDelayMs: 5,
    shardDiscoveryMs: 200,
    log: () => undefined,
    ...options,
    handler: async (event) => {
      invocations.push(event.Records);
      return behaviour(event, invocations.length);
    },
    onFailure: (failure) => failures.push(failure),
  });
  const poller = newPoller();
  return {
    table: names.events,
    poller,
    newPoller,
    invocations,
    failures,
    put: async (id, kind = 'event', extra = {}) => {
      await client.send(new PutItemCommand({ TableName: names.events, Item: { pk: { S: 'T#t#S#s1' }, sk: { S: id }, kind: { S: kind }, ...extra } }));
    },
    ids: () => invocations.map((records) => records.map((record) => record.dynamodb?.Keys?.sk?.S ?? '?')),
    stop: () => poller.stop(),
  };
}

const sortKey = (record: DynamoDBRecord | undefined) => record?.dynamodb?.Keys?.sk?.S;

describe('local stream poller', () => {
  it('delivers new INSERTs in order, in the Lambda event shape, from LATEST', async () => {
    const h = await harness();
    await h.put('before-start');
    await h.poller.start();
    await h.poller.stop();
    await h.put('e1');
    await h.put('e2', 'event', { note: { S: 'second' } });
    await h.put('e3');
    await h.poller.start();
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2', 'e3']);
    await h.stop();

    const streamArn = (await client.send(new DescribeTableCommand({ TableName: h.table }))).Table?.LatestStreamArn;
    const records = h.invocations.flat();
    const [first, second] = records as [DynamoDBRecord, DynamoDBRecord];
    expect(first).toMatchObject({
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      eventSourceARN: streamArn,
      dynamodb: {
        Keys: { pk: { S: 'T#t#S#s1' }, sk: { S: 'e1' } },
        NewImage: { pk: { S: 'T#t#S#s1' }, sk: { S: 'e1' }, kind: { S: 'event' } },
        StreamViewType: 'NEW_IMAGE',
      },
    });
    expect(typeof first.eventID).toBe('string');
    expect(typeof first.awsRegion).toBe('string');
    const approximate = first.dynamodb?.ApproximateCreationDateTime as number;
    expect(Number.isInteger(approximate)).toBe(true);
    expect(Math.abs(approximate - Date.now() / 1000)).toBeLessThan(120); // epoch seconds, not milliseconds
    expect(typeof first.dynamodb?.SizeBytes).toBe('number');
    expect(second.dynamodb?.NewImage?.note).toEqual({ S: 'second' });
    const sequenceNumbers = records.map((record) => BigInt(record.dynamodb?.SequenceNumber as string));
    expect([...sequenceNumbers].sort((a, b) => (a < b ? -1 : 1))).toEqual(sequenceNumbers);
  });

  it('starts at TRIM_HORIZON when told to, as the relay\'s mappings do: what was stored before its first start is delivered too', async () => {
    const h = await harness(undefined, { startingPosition: 'TRIM_HORIZON' });
    await h.put('before-start');
    await h.poller.start();
    await h.put('after-start');
    await expect.poll(() => h.ids().flat()).toEqual(['before-start', 'after-start']);
    await h.stop();
  });

  it('applies the filter criteria: only INSERTs of kind event or redelivery reach the handler', async () => {
    const h = await harness();
    await h.poller.start();
    await h.poller.stop();
    await h.put('e1');
    await h.put('session-row', 'session');
    await h.put('r1', 'redelivery');
    await client.send(
      new UpdateItemCommand({ TableName: h.table, Key: { pk: { S: 'T#t#S#s1' }, sk: { S: 'e1' } }, UpdateExpression: 'SET lastSeen = :now', ExpressionAttributeValues: { ':now': { N: '1' } } }),
    );
    await h.put('e2');
    await h.poller.start();
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'r1', 'e2']);
    // Filtered records are skipped, not held: the poller has moved past them.
    await h.put('e3');
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'r1', 'e2', 'e3']);
    await h.stop();
  });

  it('retries from the first failed record reported in batchItemFailures, not resending the ones before it', async () => {
    const h = await harness(async (event, invocation) => {
      if (invocation > 1) return { batchItemFailures: [] };
      // Reported out of order on purpose: the lowest sequence number is the checkpoint.
      return { batchItemFailures: [{ itemIdentifier: event.Records[3]?.dynamodb?.SequenceNumber as string }, { itemIdentifier: event.Records[2]?.dynamodb?.SequenceNumber as string }] };
    });
    await h.poller.start();
    await h.poller.stop();
    for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) await h.put(id);
    await h.poller.start();
    await expect.poll(() => h.ids()).toEqual([
      ['e1', 'e2', 'e3', 'e4', 'e5'],
      ['e3', 'e4', 'e5'],
    ]);
    await h.stop();
    expect(h.failures).toEqual([]);
  });

  it('bisects a failing batch, discards a poison record to the on-failure destination after maxRetries, and moves on', async () => {
    const h = await harness(
      async (event) => {
        if (event.Records.some((record) => record.dynamodb?.NewImage?.poison !== undefined)) throw new Error('cannot fan out');
        return { batchItemFailures: [] };
      },
      { maxRetries: 2 },
    );
    await h.poller.start();
    await h.poller.stop();
    await h.put('e1');
    await h.put('bad', 'event', { poison: { S: 'yes' } });
    await h.put('e3');
    await h.put('e4');
    await h.poller.start();
    await expect.poll(() => h.failures.length).toBe(1);
    await expect.poll(() => h.ids().at(-1)).toEqual(['e3', 'e4']);
    expect(h.ids()).toEqual([
      ['e1', 'bad', 'e3', 'e4'],
      ['e1', 'bad'],
      ['e1'],
      ['bad'],
      ['bad'],
      ['bad'],
      ['e3', 'e4'],
    ]);
    const [failure] = h.failures as [StreamBatchFailure];
    expect(failure.requestContext).toMatchObject({ condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 });
    expect(failure.responseContext.functionError).toBe('Unhandled');
    expect(failure.DDBStreamBatchInfo).toMatchObject({ batchSize: 1, shardId: expect.any(String), streamArn: expect.stringContaining(h.table) });
    expect(failure.DDBStreamBatchInfo.startSequenceNumber).toBe(failure.DDBStreamBatchInfo.endSequenceNumber);
    expect(failure.records.map(sortKey)).toEqual(['bad']);
    // The shard is not blocked: later writes still flow.
    await h.put('e5');
    await expect.poll(() => h.ids().flat().at(-1)).toBe('e5');
    await h.stop();
  });

  it('without bisection, sends the records still failing after maxRetries to the destination', async () => {
    const h = await harness(
      async (event) => ({ batchItemFailures: [{ itemIdentifier: event.Records.find((record) => sortKey(record) === 'e2')?.dynamodb?.SequenceNumber as string }] }),
      { maxRetries: 1, bisectOnError: false },
    );
    await h.poller.start();
    await h.poller.stop();
    for (const id of ['e1', 'e2', 'e3']) await h.put(id);
    await h.poller.start();
    await expect.poll(() => h.failures.length).toBe(1);
    await h.stop();
    expect(h.ids()).toEqual([
      ['e1', 'e2', 'e3'],
      ['e2', 'e3'],
    ]);
    expect(h.failures[0]?.records.map(sortKey)).toEqual(['e2', 'e3']);
    expect(h.failures[0]?.responseContext.functionError).toBeUndefined();
  });

  it('keeps one batch in flight per shard, in order, and stop() waits for it', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let finished = 0;
    const h = await harness(
      async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 150));
        inFlight -= 1;
        finished += 1;
        return { batchItemFailures: [] };
      },
      { batchSize: 2 },
    );
    await h.poller.start();
    await h.poller.stop();
    for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) await h.put(id);
    await h.poller.start();
    await expect.poll(() => h.invocations.length).toBeGreaterThanOrEqual(1);
    await h.poller.stop();
    expect(inFlight).toBe(0);
    const finishedAtStop = finished;
    expect(finishedAtStop).toBe(h.invocations.length);
    await h.poller.start();
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    await h.stop();
    expect(maxInFlight).toBe(1);
    expect(h.ids().every((batch) => batch.length <= 2)).toBe(true);
  });

  it('restarts without losing what was written while stopped, nor redelivering what was done', async () => {
    const h = await harness();
    await h.poller.start();
    await h.put('e1');
    await h.put('e2');
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2']);
    await h.poller.stop();
    await h.put('e3');
    await h.put('e4');
    await h.poller.start();
    await h.put('e5');
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    await h.stop();
  });

  it('with a checkpoint file, a new poller (a restarted process) goes on where the old one was, not at LATEST', async () => {
    const checkpointFile = join(mkdtempSync(join(tmpdir(), 'aep-poller-')), 'checkpoints.json');
    const h = await harness(undefined, { checkpointFile });
    await h.poller.start();
    await h.put('e1');
    await h.put('e2');
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2']);
    await h.poller.stop();
    // Written while no process reads the stream (a kill -9 leaves the same state on disk).
    await h.put('e3');
    await h.put('e4');
    const next = h.newPoller();
    await next.start();
    await h.put('e5');
    await expect.poll(() => h.ids().flat()).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    await next.stop();
    expect(h.failures).toEqual([]);
  });

  it('redelivers after a restart what a stop interrupted mid-retry', async () => {
    let failing = true;
    const h = await harness(
      async (event) => (failing ? { batchItemFailures: [{ itemIdentifier: event.Records[1]?.dynamodb?.SequenceNumber as string }] } : { batchItemFailures: [] }),
      // Longer than the test may take: only stop() cutting the wait short lets it finish.
      { retryBaseDelayMs: 600_000 },
    );
    await h.poller.start();
    await h.poller.stop();
    for (const id of ['e1', 'e2', 'e3']) await h.put(id);
    await h.poller.start();
    await expect.poll(() => h.invocations.length).toBe(1);
    // The poller now waits out a long backoff; stop() cuts the wait short.
    await h.poller.stop();
    failing = false;
    await h.poller.start();
    await expect.poll(() => h.ids()).toEqual([
      ['e1', 'e2', 'e3'],
      ['e2', 'e3'],
    ]);
    await h.stop();
    expect(h.failures).toEqual([]);
  });

  it('uses the fault hook: a throw from beforeInvoke counts as a function error', async () => {
    let faults = 1;
    const h = await harness(undefined, {
      beforeInvoke: () => {
        if (faults > 0) {
          faults -= 1;
          throw new Error('injected');
        }
      },
    });
    await h.poller.start();
    await h.poller.stop();
    await h.put('e1');
    await h.poller.start();
    await expect.poll(() => h.ids()).toEqual([['e1']]);
    await h.stop();
    expect(faults).toBe(0);
  });

  it('enforces the function timeout: an invocation still running past it is a function error, bisected and retried', async () => {
    const h = await harness(
      async (_event, invocation) => {
        // The first invocation (both records) overruns the timeout; the halves are quick.
        if (invocation === 1) await new Promise((resolve) => setTimeout(resolve, 400));
        return { batchItemFailures: [] };
      },
      { functionTimeoutMs: 150 },
    );
    await h.poller.start();
    await h.poller.stop();
    await h.put('e1');
    await h.put('e2');
    await h.poller.start();
    await expect.poll(() => h.ids()).toEqual([['e1', 'e2'], ['e1'], ['e2']]);
    await h.stop();
    expect(h.failures).toEqual([]);
  });
});
