/**
 * The event log keyed by position (no index): one write unit per event up to 1 KB, retransmits
 * stored once, a different event at a taken position refused, seq-less events in their place,
 * replay and paged reads in `(epoch, seq)` order. On tables of its own (no stack fans them
 * out; `stream-fold.ts` stands in for fan-out before a replay), with a capacity meter counting
 * what each call consumed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTables, localTableNames } from '../../local/create-tables.ts';
import { CapacityMeter } from '../../src/store/capacity-meter.ts';
import type { AdmittedEvent } from '../../src/relay/domain/stored-event.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import type { Position } from '../../src/protocol/positions.ts';
import { dynamoClient, eventLog as sharedEventLog, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { finishFanout, replayOf } from '../support/stream-fold.ts';

const tables = localTableNames(uniqueName('log'));
beforeAll(async () => {
  await createTables(dynamoClient(), tables);
});

const eventLog = (options: Parameters<typeof sharedEventLog>[0] = {}) => sharedEventLog({ ...options, tableName: tables.events });
/** Fan-out finishing with the session: replay serves nothing above the release points. */
const fannedOut = (_log: ReturnType<typeof eventLog>, tenant: string, session: string) => finishFanout(dynamoClient(), tables.events, tenant, session);
const replay = (log: ReturnType<typeof eventLog>, tenant: string, session: string, after?: Position, window = 1000) => replayOf(dynamoClient(), log, tables.events, window, tenant, session, after);

function admitted(event: Record<string, unknown>): AdmittedEvent {
  return { event: event as unknown as AepEvent, raw: JSON.stringify(event) };
}

const seqs = (items: readonly string[]) => items.map((raw) => (JSON.parse(raw) as { seq?: number; type: string }).seq ?? (JSON.parse(raw) as { type: string }).type);

describe('event log keyed by position', () => {
  it('stores an event of up to 1 KB with one write unit, and a retransmit once (then a marker, forwarded)', async () => {
    const meter = new CapacityMeter();
    const log = eventLog({ meter });
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    // The session registry write happens once per session and process: take it first.
    expect(await log.append(tenant, admitted(sessionEvent(session, 0)))).toBe('stored');
    meter.reset();
    const event = sessionEvent(session, 1, { data: { phase: 'p'.repeat(500) } });
    expect(JSON.stringify(event).length).toBeLessThan(1000);
    expect(await log.append(tenant, admitted(event))).toBe('stored');
    expect(meter.snapshot()).toMatchObject({ writeUnits: 1, readUnits: 0, calls: 1 });
    expect(await log.append(tenant, admitted(event))).toBe('duplicate');
    await fannedOut(log, tenant, session);
    const { items } = await replay(log, tenant, session);
    expect(seqs(items)).toEqual([0, 1]);
  });

  it('refuses a different event at a taken position, keeping the stored one', async () => {
    const log = eventLog();
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const first = sessionEvent(session, 5, { subject: 'first' });
    const other = sessionEvent(session, 5, { subject: 'second' });
    expect(await log.append(tenant, admitted(first))).toBe('stored');
    expect(await log.append(tenant, admitted(other))).toBe('conflict');
    await fannedOut(log, tenant, session);
    const { items } = await replay(log, tenant, session);
    expect(items.map((raw) => JSON.parse(raw).id)).toEqual([first.id]);
  });

  it('stores an id reused at a different position there too (dedupe is per position)', async () => {
    const log = eventLog();
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const event = sessionEvent(session, 1);
    await log.append(tenant, admitted(event));
    expect(await log.append(tenant, admitted({ ...event, seq: 2 }))).toBe('stored');
    await fannedOut(log, tenant, session);
    expect(seqs((await replay(log, tenant, session)).items)).toEqual([1, 2]);
  });

  it('stores a seq-less event once however often it comes, in its place after the position it arrived at', async () => {
    const log = eventLog();
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    for (const seq of [0, 1, 2]) await log.append(tenant, admitted(sessionEvent(session, seq)));
    const routed = sessionEvent(session, 0, { type: 'attention.routed', source: 'aep://phone/agent/phone', agent: 'phone', data: { request: 'r1', to: 'me' } });
    delete routed.seq;
    expect(await log.append(tenant, admitted(routed))).toBe('stored');
    expect(await log.append(tenant, admitted(routed))).toBe('duplicate');
    for (const seq of [3, 4]) await log.append(tenant, admitted(sessionEvent(session, seq)));
    await fannedOut(log, tenant, session);
    expect(seqs((await replay(log, tenant, session)).items)).toEqual([0, 1, 2, 'attention.routed', 3, 4]);
    // Strictly after (0, 2): the seq-less event that arrived after 2 was stored is included.
    expect(seqs((await replay(log, tenant, session, { session, epoch: 0, seq: 2 })).items)).toEqual(['attention.routed', 3, 4]);
    expect(seqs((await replay(log, tenant, session, { session, epoch: 0, seq: 3 })).items)).toEqual([4]);
  });

  it('orders by (epoch, seq), serves the newest window and says where it starts, and pages in order', async () => {
    const log = eventLog({ replayBuffer: 5 });
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const positions: Array<[number, number]> = [
      [1, 0],
      [0, 10],
      [0, 2],
      [1, 3],
      [0, 9],
      [2, 1],
      [0, 11],
    ];
    for (const [epoch, seq] of positions) await log.append(tenant, admitted(sessionEvent(session, seq, { epoch })));
    const order = (items: ReadonlyArray<{ raw: string } | string>) => items.map((item) => (typeof item === 'string' ? item : item.raw)).map((raw) => `${JSON.parse(raw).epoch}.${JSON.parse(raw).seq}`);
    const all = ['0.2', '0.9', '0.10', '0.11', '1.0', '1.3', '2.1'];
    await fannedOut(log, tenant, session);
    const replayed = await replay(log, tenant, session, { session, epoch: 0, seq: 0 }, 5);
    expect(order(replayed.items)).toEqual(all.slice(2));
    expect(replayed.exhaustedEarliest).toEqual({ session, epoch: 0, seq: 10 });
    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await log.readAfter(tenant, session, { session, epoch: 0, seq: 2 }, 2, cursor);
      pages.push(...order(page.items));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(pages).toEqual(all.slice(1));
  });

  it('keys positions by emitter: two sources hold the same positions of one session name, each refusing a different event at its own', async () => {
    const log = eventLog();
    const tenant = uniqueName('t');
    const session = uniqueName('s');
    const first = (seq: number) => sessionEvent(session, seq, { source: 'aep://host-a/agent/a', agent: 'a' });
    const second = (seq: number) => sessionEvent(session, seq, { source: 'aep://host-b/agent/b', agent: 'b' });
    for (const seq of [0, 1, 2]) {
      expect(await log.append(tenant, admitted(first(seq)))).toBe('stored');
      expect(await log.append(tenant, admitted(second(seq)))).toBe('stored');
    }
    expect(await log.append(tenant, admitted({ ...first(1), subject: 'another' }))).toBe('conflict');
    await fannedOut(log, tenant, session);
    const served = (await replay(log, tenant, session)).items.map((raw) => `${(JSON.parse(raw) as { agent: string }).agent}${(JSON.parse(raw) as { seq: number }).seq}`);
    // Position order; at one position the emitters in the order of their source digests.
    expect(served).toHaveLength(6);
    expect(served.map((label) => label.slice(1))).toEqual(['0', '0', '1', '1', '2', '2']);
    // A bare resume position applies to both emitters.
    expect((await replay(log, tenant, session, { session, epoch: 0, seq: 1 })).items).toHaveLength(2);
  });
});
