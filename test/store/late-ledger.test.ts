/**
 * The late ledger end to end on DynamoDB Local: fan-out's late-arrival detection over a stream
 * order, then replay after a position returning exactly the events below it stored after it
 * (AEP-0003 §7), measured by `above` for an in-order position and by store rank for a late one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTables, localTableNames } from '../../local/create-tables.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import type { Deliverable } from '../../src/relay/domain/deliverable.ts';
import { sessionTopKey } from '../../src/relay/domain/history.ts';
import { LateArrivals } from '../../src/relay/fanout/late-arrivals.ts';
import { eventKeys } from '../../src/store/keys.ts';
import { positionKey } from '../../src/store/position-key.ts';
import { dynamoClient, eventLog, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';

const seqs = (items: ReadonlyArray<{ raw: string }>) => items.map((item) => (JSON.parse(item.raw) as { seq: number }).seq);

// Tables of its own: a stack other tests run on the shared tables would fan these events out
// and record ledger entries of its own, with real stream ranks beside this test's stand-ins.
const tables = localTableNames(uniqueName('ledger'));
beforeAll(async () => {
  await createTables(dynamoClient(), tables);
});

describe('late ledger', () => {
  it('records events stored below a higher one, and replay after P returns those below P stored after P', async () => {
    const log = eventLog({ replayBuffer: 100, tableName: tables.events });
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const events = Array.from({ length: 6 }, (_, seq) => sessionEvent(session, seq));
    // Store order, as the stream would give it: 0, 1, 4, 2, 5, 3.
    const storeOrder = [0, 1, 4, 2, 5, 3];
    const deliverables: Deliverable[] = [];
    for (const [rank, seq] of storeOrder.entries()) {
      const event = events[seq]!;
      const raw = JSON.stringify(event);
      expect(await log.append(tenant, { event: event as unknown as AepEvent, raw })).toBe('stored');
      const key = positionKey(0, seq);
      deliverables.push({ recordId: String(1000 + rank), storeRank: String(1000 + rank), tenant, raw, event: event as unknown as AepEvent, kind: 'event', order: { key, itemKey: eventKeys.positionSort(key) } });
    }
    // A new session: nothing was stored before this batch.
    const late = await new LateArrivals(log).record(tenant, deliverables, new Map([[sessionTopKey(tenant, session), null]]));
    expect([...late].map((deliverable) => deliverable.event.seq)).toEqual([2, 3]);

    const after = async (seq: number) => seqs((await log.replay(tenant, session, { session, epoch: 0, seq })).items);
    // 4 was stored in order: 2 and 3 came after it.
    expect(await after(4)).toEqual([2, 3, 5]);
    // 5 too: only 3 came after it (2 was stored before 5).
    expect(await after(5)).toEqual([3]);
    // 2 was late: nothing below it came after it.
    expect(await after(2)).toEqual([3, 4, 5]);
    // 3 was late and stored last: 2 was stored before it.
    expect(await after(3)).toEqual([4, 5]);
    // The positions before the first and in order are untouched.
    expect(await after(1)).toEqual([2, 3, 4, 5]);
  });

  it('falls back to the log ceiling when the top before the batch is unknown: in-order events may be recorded, none is missed', async () => {
    const log = eventLog({ replayBuffer: 100, tableName: tables.events });
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const deliverables: Deliverable[] = [];
    for (const [rank, seq] of [0, 2, 1].entries()) {
      const event = sessionEvent(session, seq);
      const raw = JSON.stringify(event);
      await log.append(tenant, { event: event as unknown as AepEvent, raw });
      const key = positionKey(0, seq);
      deliverables.push({ recordId: String(2000 + rank), storeRank: String(2000 + rank), tenant, raw, event: event as unknown as AepEvent, kind: 'event', order: { key, itemKey: eventKeys.positionSort(key) } });
    }
    const late = await new LateArrivals(log).record(tenant, deliverables, new Map());
    // The ceiling is above the newest stored position (2): every event of the batch is recorded
    // (only 1 was truly late); store ranks still keep resume exact.
    expect([...late].map((deliverable) => deliverable.event.seq)).toEqual([0, 2, 1]);
    expect(seqs((await log.replay(tenant, session, { session, epoch: 0, seq: 2 })).items)).toEqual([1]);
    expect(seqs((await log.replay(tenant, session, { session, epoch: 0, seq: 0 })).items)).toEqual([1, 2]);
  });
});
