/**
 * The late ledger and the session top end to end on DynamoDB Local: fan-out's session step
 * (`fanout/late-arrivals.ts`) over stream batches in a store order the test sets, then replay
 * after a position returning the events below it stored after it (AEP-0003 §7) and nothing
 * fan-out has not finished with.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTables, localTableNames } from '../../local/create-tables.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import { eventKeys } from '../../src/store/keys.ts';
import { positionKey } from '../../src/store/position-key.ts';
import { queryAll } from '../../src/store/table-access.ts';
import { dynamoClient, eventLog, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { foldBatch, insertRecords, seqOf, sessionItems } from '../support/stream-fold.ts';

const seqs = (items: ReadonlyArray<{ raw: string }>) => items.map((item) => (JSON.parse(item.raw) as { seq: number }).seq);

// Tables of its own: a stack other tests run on the shared tables would fan these events out
// and record ledger entries of its own, with real stream ranks beside this test's stand-ins.
const tables = localTableNames(uniqueName('ledger'));
beforeAll(async () => {
  await createTables(dynamoClient(), tables);
});

/** A session of its own on this file's tables, its events appended (stored) in the order given. */
function session() {
  const log = eventLog({ replayBuffer: 100, tableName: tables.events });
  const tenant = uniqueName('t');
  const id = uniqueName('s');
  const client = dynamoClient();
  /** Fan-out handling one stream batch; answers the seqs it found late. */
  const fold = async (records: readonly DynamoDBRecord[]): Promise<number[]> => (await foldBatch(client, log, tables.events, records)).map((deliverable) => deliverable.event.seq as number);
  /** Stream records of these stored events, in this (store) order. */
  const records = async (...seqList: number[]): Promise<DynamoDBRecord[]> => {
    const items = await sessionItems(client, tables.events, tenant, id);
    return insertRecords(seqList.map((seq) => items.find((item) => seqOf(item) === seq) ?? expect.unreachable(`seq ${seq} is not stored`)));
  };
  return {
    log,
    tenant,
    id,
    async store(...seqList: number[]): Promise<void> {
      for (const seq of seqList) {
        const event = sessionEvent(id, seq);
        expect(await log.append(tenant, { event: event as unknown as AepEvent, raw: JSON.stringify(event) })).toBe('stored');
      }
    },
    records,
    fold,
    /** Fan-out handling one stream batch holding these events in this (store) order. */
    fanOut: async (...seqList: number[]): Promise<number[]> => fold(await records(...seqList)),
    after: async (seq: number) => log.replay(tenant, id, { session: id, epoch: 0, seq }),
    afterSeqs: async (seq: number) => seqs((await log.replay(tenant, id, { session: id, epoch: 0, seq })).items),
    ledgerItems: async (): Promise<number> => (await queryAll(client, tables.events, eventKeys.sessionPartition(tenant, id), 'L#')).length,
  };
}

describe('late ledger and session top', () => {
  it('records events stored below a higher one, and replay after P returns those below P stored after P', async () => {
    const s = session();
    // Store order, as the stream gives it: 0, 1, 4, 2, 5, 3, in one batch of a new session.
    await s.store(0, 1, 4, 2, 5, 3);
    expect(await s.fanOut(0, 1, 4, 2, 5, 3)).toEqual([2, 3]);
    // 4 was stored in order: 2 and 3 came after it.
    expect(await s.afterSeqs(4)).toEqual([2, 3, 5]);
    // 5 too: only 3 came after it (2 was stored before 5).
    expect(await s.afterSeqs(5)).toEqual([3]);
    // 2 was late: nothing below it came after it.
    expect(await s.afterSeqs(2)).toEqual([3, 4, 5]);
    // 3 was late and stored last; 2 (stored before it, under the same top) comes again: a late
    // position may reach a consumer before fan-out recorded what was stored before it.
    expect(await s.afterSeqs(3)).toEqual([2, 4, 5]);
    // The positions before the first and in order are untouched.
    expect(await s.afterSeqs(1)).toEqual([2, 3, 4, 5]);
  });

  it('measures lateness against the top earlier batches left, across batches', async () => {
    const s = session();
    await s.store(0, 1, 5);
    expect(await s.fanOut(0, 1, 5)).toEqual([]);
    // Rising within the batch, but 3 is below the 5 an earlier batch left.
    await s.store(3, 6);
    expect(await s.fanOut(3, 6)).toEqual([3]);
    // Falling within the batch.
    await s.store(8, 7);
    expect(await s.fanOut(8, 7)).toEqual([7]);
    expect(await s.afterSeqs(5)).toEqual([3, 6, 7, 8]);
    // 3 was stored before 6.
    expect(await s.afterSeqs(6)).toEqual([7, 8]);
    expect(await s.afterSeqs(8)).toEqual([7]);
  });

  it('serves nothing fan-out has not finished with, so a consumer never holds a position above an unrecorded late event', async () => {
    const s = session();
    // The consumer got 0, 1, 2, 4; fan-out finished with them.
    await s.store(0, 1, 2, 4);
    expect(await s.fanOut(0, 1, 2, 4)).toEqual([]);
    // Then 3 (late: below 4) and 5 are stored, and fan-out has not got to them yet.
    await s.store(3, 5);
    // Resume after 4: 3 is not on record yet and 5 is above the top: neither is served (both
    // come live). Serving 5 here is the loss this guards against: a consumer that dropped after
    // it would resume after 5, and 3 (stored before 5) would never be returned.
    const early = await s.after(4);
    expect(seqs(early.items)).toEqual([]);
    expect(early.pendingThrough).toBe(positionKey(0, 5));
    expect(await s.log.sessionTop(s.tenant, s.id)).toBe(positionKey(0, 4));
    // Resume after 2 serves what is at or below the top (3 is, though fan-out has not recorded it).
    expect(seqs((await s.after(2)).items)).toEqual([3, 4]);
    // A stream's catch-up read is bounded the same way.
    expect(seqs(await s.log.storedSince(s.tenant, s.id, 0))).toEqual([0, 1, 2, 3, 4]);

    expect(await s.fanOut(3, 5)).toEqual([3]);
    const settled = await s.after(4);
    expect(seqs(settled.items)).toEqual([3, 5]);
    expect(settled.pendingThrough).toBeUndefined();
    // 3 was stored before 5: whoever holds 5 got 3 first (live in stream order, or from the replay above).
    expect(await s.afterSeqs(5)).toEqual([]);
  });

  it('returns, after a late position a replay served before fan-out recorded it, what was stored before it and not served', async () => {
    const s = session();
    await s.store(0, 2, 5);
    expect(await s.fanOut(0, 2, 5)).toEqual([]);
    // 1 and 3 are stored (both late: below 5); fan-out lags.
    await s.store(1, 3);
    // A consumer holding 2 resumes: 3 and 5 are at or below the top and served; 1 (below 2) is
    // not on record yet. It drops after 3.
    expect(await s.afterSeqs(2)).toEqual([3, 5]);
    expect(await s.fanOut(1, 3)).toEqual([1, 3]);
    // Resume after 3: 1 was stored before 3, but the consumer never got it.
    expect(await s.afterSeqs(3)).toContain(1);
  });

  it('writes nothing again for a batch folded before (a retry), and tells its late events again when it was the newest folded', async () => {
    const s = session();
    await s.store(0, 2, 1);
    const batch = await s.records(0, 2, 1);
    expect(await s.fold(batch)).toEqual([1]);
    const client = dynamoClient();
    const summary = async () =>
      (await client.send(new GetItemCommand({ TableName: tables.events, Key: { pk: { S: eventKeys.sessionRegistryPartition(s.tenant) }, sk: { S: s.id } }, ConsistentRead: true }))).Item;
    const before = await summary();
    const ledgerEntries = await s.ledgerItems();
    // The retry: same records, same sequence numbers; the top before it is on the summary.
    expect(await s.fold(batch)).toEqual([1]);
    expect(await summary()).toEqual(before);
    expect(await s.ledgerItems()).toBe(ledgerEntries);
    expect(before?.eventCount?.N).toBe('3');
    expect(await s.afterSeqs(2)).toEqual([1]);
    expect(await s.afterSeqs(0)).toEqual([1, 2]);

    // A rising batch (the one-write path), retried whole: nothing late, as the first time.
    await s.store(3, 4);
    const next = await s.records(3, 4);
    expect(await s.fold(next)).toEqual([]);
    expect(await s.fold(next)).toEqual([]);
    // The older batch retried once a newer one was folded: its lateness is no longer known, so
    // every event of it is answered (fan-out skips none of them as already replayed).
    expect(await s.fold(batch)).toEqual([0, 2, 1]);
  });
});
