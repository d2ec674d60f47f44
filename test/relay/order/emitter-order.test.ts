/**
 * The session order core (`order/emitter-order.ts`), without DynamoDB: table-driven cases of
 * each decision. The whole pipeline around it (store orders, retried and duplicated batches,
 * consumers that drop and resume) is played by the delivery simulation (`test/sim/`).
 */
import { describe, expect, it } from 'vitest';
import { advance, EMPTY_ORDER_STATE, MAX_HOLES, comparePlaces, withConfirmed } from '../../../src/relay/order/emitter-order.ts';
import type { Advance, AdvanceInput, GapCheck, OrderRecord, OrderState, Place } from '../../../src/relay/order/emitter-order.ts';

const WAIT = 500;
const ADOPT = 10_000;
const at = (seq: number, epoch = 0): Place => ({ epoch, seq });
const rec = (seq: number, storedAtMs = 0, epoch = 0): OrderRecord => ({ place: at(seq, epoch), storedAtMs });

type Advanced = Extract<Advance, { kind: 'advanced' }>;

/** Runs `advance`, answering its gap checks from `log` (what the log holds, by place). */
function step(state: OrderState, input: Omit<AdvanceInput, 'waitMs' | 'adoptAfterMs'>, log: readonly OrderRecord[] = []): Advanced {
  const checked: GapCheck[] = [];
  for (;;) {
    const result = advance(state, { waitMs: WAIT, adoptAfterMs: ADOPT, ...input, checked });
    if (result.kind === 'advanced') return result;
    const found = log.filter((entry) => (result.after === null || comparePlaces(entry.place, result.after) > 0) && comparePlaces(entry.place, result.before) < 0);
    checked.push({ after: result.after, before: result.before, found });
  }
}

const seqs = (result: Advanced) => result.deliver.map((delivery) => (delivery.late ? `${delivery.place.seq}L` : String(delivery.place.seq)));
const commit = (result: Advanced): OrderState => (result.write ? { ...result.next, version: result.next.version + 1 } : result.next);

describe('session order: decisions', () => {
  it('releases what follows the release point at once, in position order, whatever the store order', () => {
    const result = step(EMPTY_ORDER_STATE, { records: [rec(1), rec(0), rec(2)], nowMs: 0 });
    expect(seqs(result)).toEqual(['0', '1', '2']);
    expect(result.next.released).toEqual(at(2));
    expect(result.wakeAtMs).toBeUndefined();
  });

  it('holds what lies above a gap and asks to be woken when the wait is over, without waiting', () => {
    const first = step(EMPTY_ORDER_STATE, { records: [rec(0, 0), rec(3, 10)], nowMs: 20 });
    expect(seqs(first)).toEqual(['0']);
    expect(first.next.held.map((held) => held.place.seq)).toEqual([3]);
    expect(first.wakeAtMs).toBe(10 + WAIT);
    // The missing ones arrive within the wait: all in order, nothing late.
    const second = step(commit(first), { records: [rec(2, 30), rec(1, 40)], nowMs: 50 });
    expect(seqs(second)).toEqual(['1', '2', '3']);
    expect(second.late).toEqual([]);
  });

  it('passes a gap once the wait is over and the log holds nothing in it; what lands in the hole later is late, recorded above the release point', () => {
    const first = commit(step(EMPTY_ORDER_STATE, { records: [rec(0, 0), rec(3, 10)], nowMs: 20 }));
    const woken = step(first, { records: [], wake: { version: first.version }, nowMs: 10 + WAIT });
    expect(seqs(woken)).toEqual(['3']);
    expect(woken.next.holes).toEqual([{ after: at(0), before: at(3) }]);
    const late = step(commit(woken), { records: [rec(2, 700)], nowMs: 710 });
    expect(seqs(late)).toEqual(['2L']);
    expect(late.late).toEqual([{ place: at(2), above: at(3) }]);
    expect(late.next.holes).toEqual([{ after: at(0), before: at(2) }]);
  });

  it('keeps waiting for what the log holds in the gap (its record is on its way), and releases it from the log when it never comes', () => {
    const held = commit(step(EMPTY_ORDER_STATE, { records: [rec(0, 0), rec(2, 10)], nowMs: 20 }));
    const log = [rec(1, 400)];
    const waiting = step(held, { records: [], wake: { version: held.version }, nowMs: 600 }, log);
    expect(seqs(waiting)).toEqual([]);
    expect(waiting.write).toBe(true);
    const adopted = step(commit(waiting), { records: [], wake: { version: held.version + 1 }, nowMs: 400 + ADOPT }, log);
    expect(seqs(adopted)).toEqual(['1', '2']);
    expect(adopted.next.holes).toEqual([]);
  });

  it('waits across an epoch boundary too, and for the first positions of a session it meets mid-stream', () => {
    const epochOne = step({ ...EMPTY_ORDER_STATE, released: at(7) }, { records: [rec(0, 0, 1)], nowMs: 10 });
    expect(seqs(epochOne)).toEqual([]);
    expect(step({ ...EMPTY_ORDER_STATE, released: at(7) }, { records: [rec(0, 0, 1)], nowMs: WAIT }).deliver).toHaveLength(1);
    expect(seqs(step(EMPTY_ORDER_STATE, { records: [rec(5, 0)], nowMs: 10 }))).toEqual([]);
  });

  it('releases a first seq 0 of a later epoch only after a check of the log below it, so an earlier epoch in flight is not passed unseen', () => {
    // Nothing stored below: released at once (a fresh session is not held for the order wait).
    expect(seqs(step(EMPTY_ORDER_STATE, { records: [rec(0, 0, 3)], nowMs: 10 }))).toEqual(['0']);
    // The restarted emitter's epoch 0 is stored but not seen yet: its records are waited for.
    const waiting = step(EMPTY_ORDER_STATE, { records: [rec(0, 5, 1)], nowMs: 10 }, [rec(0, 2, 0), rec(1, 3, 0)]);
    expect(seqs(waiting)).toEqual([]);
    // They come: released in order; the new epoch waits as any epoch boundary does.
    const next = step(commit(waiting), { records: [rec(0, 2, 0), rec(1, 3, 0)], nowMs: 20 });
    expect(seqs(next)).toEqual(['0', '1']);
    expect(next.next.released).toEqual(at(1));
    expect(seqs(step(commit(next), { records: [], nowMs: 5 + WAIT }))).toEqual(['0']);
  });

  it('takes a record at or below the release point outside every hole as seen before: nothing is released or recorded again', () => {
    const first = commit(step(EMPTY_ORDER_STATE, { records: [rec(0), rec(1), rec(2)], nowMs: 0 }));
    const retried = step(first, { records: [rec(1), rec(2)], nowMs: 5 });
    expect(retried).toMatchObject({ deliver: [], late: [], write: false });
  });

  it('keeps a bounded number of holes: a record landing in a forgotten one is late all the same', () => {
    let state = EMPTY_ORDER_STATE;
    // 0, 2, 4, ...: each gap passed after its wait, each leaving a one-position hole.
    for (let seq = 0; seq <= 2 * (MAX_HOLES + 3); seq += 2) state = commit(step(state, { records: [rec(seq, 0)], nowMs: WAIT }));
    expect(state.holes).toHaveLength(MAX_HOLES);
    const oldest = step(state, { records: [rec(1, 2 * WAIT)], nowMs: 2 * WAIT });
    expect(seqs(oldest)).toEqual(['1L']);
    const newest = step(state, { records: [rec(2 * (MAX_HOLES + 3) - 1, 2 * WAIT)], nowMs: 2 * WAIT });
    expect(newest.late).toHaveLength(1);
    // A record seen before above the forgotten holes is a retry, never late (below them it would
    // count as late: a duplicate at worst).
    expect(step(state, { records: [rec(2 * (MAX_HOLES + 3))], nowMs: 2 * WAIT })).toMatchObject({ late: [], write: false });
  });

  it('ignores a stale wake-up: the newer write brings its own', () => {
    const held = commit(step(EMPTY_ORDER_STATE, { records: [rec(0, 0), rec(2, 0)], nowMs: 0 }));
    const newer = commit(step(held, { records: [rec(5, 0)], nowMs: 1 }));
    expect(step(newer, { records: [], wake: { version: held.version }, nowMs: 2 })).toMatchObject({ deliver: [], write: false });
    expect(seqs(step(newer, { records: [], wake: { version: newer.version }, nowMs: WAIT }))).toEqual(['2', '5']);
  });

  it('takes from a state read back what confirmations since said: the delivered point, never lowered, and the late events covered', () => {
    const readBack: OrderState = { ...EMPTY_ORDER_STATE, released: at(9), delivered: at(4), pendingLate: [at(2), at(3), at(6)], version: 7 };
    // A runner delivered 2 and 3 late, through 9; 6 came late after its step.
    expect(withConfirmed(readBack, { through: at(9), late: [at(2), at(3)] })).toEqual({ ...readBack, delivered: at(9), pendingLate: [at(6)] });
    expect(withConfirmed(readBack, { through: at(1), late: [] })).toEqual(readBack);
    expect(withConfirmed(readBack, { through: null, late: [at(6, 1)] })).toEqual(readBack);
  });
});
