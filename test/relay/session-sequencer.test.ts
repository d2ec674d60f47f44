/**
 * Live order for a session fan-out handled nothing of before: every position below its first
 * event is still to come, so the sequencer waits for them (bounded) and delivers them first,
 * whatever the log's store times say. Pure logic over an in-memory log and clock.
 */
import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../src/protocol/event.ts';
import type { Position } from '../../src/protocol/positions.ts';
import type { Deliverable } from '../../src/relay/domain/deliverable.ts';
import type { StoredEvent } from '../../src/relay/domain/stored-event.ts';
import { SessionSequencer } from '../../src/relay/fanout/session-sequencer.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

const session = 'fresh';
const key = (seq: number) => `k${String(seq).padStart(4, '0')}`;

function stored(seq: number, storedAtMs: number): StoredEvent {
  return { raw: JSON.stringify(sessionEvent(session, seq)), order: { key: key(seq), itemKey: `P#${key(seq)}` }, storedAtMs };
}

function arriving(seq: number, storedAtMs: number): Deliverable {
  const event = sessionEvent(session, seq);
  return { recordId: String(seq), tenant: 't', raw: JSON.stringify(event), event: event as unknown as AepEvent, kind: 'event', order: { key: key(seq), itemKey: `P#${key(seq)}` }, storeRank: String(seq), storedAtMs };
}

/** A log that holds 0..11 (stored in the same millisecond as 12, as an NDJSON-like burst can be) once asked twice. */
function burstLog() {
  let reads = 0;
  return {
    storedBetween: async (_tenant: string, _session: string, after: Position | undefined, before: Position, limit: number, newestFirst = false) => {
      reads += 1;
      const all = reads < 2 ? [] : Array.from({ length: 12 }, (_, seq) => stored(seq, 1000));
      const inRange = all.filter((item) => (after === undefined || JSON.parse(item.raw).seq > after.seq) && JSON.parse(item.raw).seq < before.seq);
      return (newestFirst ? inRange.reverse() : inRange).slice(0, limit);
    },
  };
}

describe('session sequencer', () => {
  it('for a fresh session, fills every missing position below its first event before it', async () => {
    let clock = 1000;
    const sequencer = new SessionSequencer({ eventLog: burstLog(), now: () => clock, orderWaitMs: 500, sleep: async (ms) => void (clock += ms) });
    const ordered = await sequencer.order('t', [arriving(12, 1000)], new Set([session]));
    expect(ordered.map((deliverable) => [deliverable.event.seq, deliverable.gapFill === true])).toEqual([
      ...Array.from({ length: 12 }, (_, seq) => [seq, true]),
      [12, false],
    ]);
  });

  it('for a session it only does not remember, judges from the log and does not wait when that cannot tell', async () => {
    let clock = 1000;
    const log = burstLog();
    await log.storedBetween('t', session, undefined, { session, epoch: 0, seq: 0 }, 1);
    const sequencer = new SessionSequencer({ eventLog: log, now: () => clock, orderWaitMs: 500, sleep: async (ms) => void (clock += ms) });
    // Ten positions below 12 stored no earlier than it: another container may have released them.
    const ordered = await sequencer.order('t', [arriving(12, 1000)]);
    expect(ordered.map((deliverable) => deliverable.event.seq)).toEqual([12]);
  });
});
