/**
 * The session order core (`order/emitter-order.ts`), without DynamoDB: table-driven cases of
 * each decision, then a property test that plays random store orders, gaps, batch boundaries,
 * retried batches and a consumer that drops and resumes from the last position it received,
 * against a model of the log and the replay rule, and holds the core to: no admitted event is
 * missed, the consumer always progresses, duplicates stay bounded. Retried batches come whole
 * or bisected (their first half), as the event source mapping retries them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { advance, EMPTY_ORDER_STATE, MAX_HOLES, comparePlaces } from '../../../src/relay/order/emitter-order.ts';
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
    expect(seqs(step(EMPTY_ORDER_STATE, { records: [rec(0, 0, 3)], nowMs: 10 }))).toEqual(['0']);
  });

  it('takes a record at or below the release point outside every hole as a retry: the last step goes out again, nothing is recorded late', () => {
    const first = commit(step(EMPTY_ORDER_STATE, { records: [rec(0), rec(1), rec(2)], nowMs: 0 }));
    const retried = step(first, { records: [rec(1), rec(2)], nowMs: 5 });
    expect(retried.redeliver).toEqual({ after: null, through: at(2), late: [] });
    expect(retried.late).toEqual([]);
    expect(retried.write).toBe(false);
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

  it('ignores a stale wake-up and redelivers the step a retried one triggered', () => {
    const held = commit(step(EMPTY_ORDER_STATE, { records: [rec(0, 0), rec(2, 0)], nowMs: 0 }));
    const newer = commit(step(held, { records: [rec(5, 0)], nowMs: 1 }));
    expect(step(newer, { records: [], wake: { version: held.version }, nowMs: 2 })).toMatchObject({ deliver: [], write: false });
    const woken = step(newer, { records: [], wake: { version: newer.version }, nowMs: WAIT });
    const after = commit(woken);
    expect(step(after, { records: [], wake: { version: newer.version }, nowMs: WAIT + 1 }).redeliver).toEqual({ after: at(0), through: at(5), late: [] });
  });
});

interface Stored extends OrderRecord {
  id: number;
}

/**
 * A model of the relay around the core: a log (events with their store times), a stream in
 * store order cut into random batches, commits, retried batches that lose their deliveries,
 * wake-ups, and a consumer that resumes after the last position it got, under the replay rule
 * (nothing above the committed release point; late entries below the resume point whose
 * `above` is at or above it).
 */
function simulate(params: { gaps: boolean[]; jitter: number[]; batchSizes: number[]; failures: boolean[]; bisect: boolean; takes: number[] }) {
  params = { ...params };
  let seq = -1;
  const events: Stored[] = [];
  params.jitter.forEach((jitter, index) => {
    seq += params.gaps[index] === true ? 2 : 1;
    events.push({ id: index, place: at(seq), storedAtMs: index * 5 + jitter });
  });
  const storeOrder = [...events].sort((a, b) => a.storedAtMs - b.storedAtMs || a.id - b.id);
  let state = EMPTY_ORDER_STATE;
  const lateEntries: Array<{ place: Place; above: Place }> = [];
  let streamed = 0;
  let pendingWake: number | undefined;
  let batchIndex = 0;
  let retrying = false;
  let bisected: number | undefined;
  let writtenWake: number | undefined;
  const received: number[] = [];
  // Kept beside `received` so that the convergence check per step is not a pass over every
  // delivery so far (quadratic in a long unconverged run: seconds per case).
  const receivedIds = new Set<number>();
  let last: Place | null = null;
  let connected: { left: number } | undefined;
  let connections = 0;
  const byPlace = new Map(events.map((event) => [`${event.place.seq}`, event]));
  const give = (place: Place) => {
    if (connected === undefined) return;
    if (connected.left <= 0) return;
    const event = byPlace.get(`${place.seq}`);
    if (event === undefined) return;
    received.push(event.id);
    receivedIds.add(event.id);
    last = place;
    connected.left -= 1;
  };
  const connect = () => {
    connections += 1;
    connected = { left: params.takes[connections % params.takes.length] ?? 5 };
    const released = state.released;
    const from = last;
    const late = from === null ? [] : lateEntries.filter((entry) => comparePlaces(entry.place, from) < 0 && comparePlaces(entry.above, from) >= 0).map((entry) => entry.place);
    const window = released === null ? [] : events.filter((event) => comparePlaces(event.place, released) <= 0 && (from === null || comparePlaces(event.place, from) > 0)).map((event) => event.place);
    for (const place of [...late.sort(comparePlaces), ...window.sort(comparePlaces)]) give(place);
  };
  for (let now = 0; now < 200_000; now += 10) {
    const available = storeOrder.filter((event, index) => index >= streamed && event.storedAtMs <= now);
    const size = bisected ?? params.batchSizes[batchIndex % params.batchSizes.length] ?? 10;
    bisected = undefined;
    const batch = available.slice(0, size);
    // A failing batch fails once: its retry goes through, whole or (bisected) its first half.
    const failing: boolean = !retrying && params.failures[batchIndex % params.failures.length] === true;
    retrying = failing;
    if (failing && params.bisect && batch.length > 1) bisected = Math.ceil(batch.length / 2);
    batchIndex += 1;
    if (batch.length > 0 || pendingWake !== undefined) {
      const log = storeOrder.filter((event) => event.storedAtMs <= now);
      const result = step(state, { records: batch, ...(pendingWake === undefined ? {} : { wake: { version: pendingWake } }), nowMs: now }, log);
      lateEntries.push(...result.late);
      if (result.write) state = { ...result.next, version: state.version + 1 };
      // A committed write with a wake-up is a stream record of its own, whether or not the
      // invocation then failed: it comes after the retried batch.
      if (result.write && result.wakeAtMs !== undefined) writtenWake = state.version;
      if (!failing) {
        streamed += batch.length;
        pendingWake = writtenWake;
        writtenWake = undefined;
        // Live: the consumer, when connected, gets what this step delivers, in order.
        const redeliver = result.redeliver;
        const again =
          redeliver === undefined
            ? []
            : [...redeliver.late, ...events.filter((event) => comparePlaces(event.place, redeliver.through ?? at(-1)) <= 0 && (redeliver.after === null || comparePlaces(event.place, redeliver.after) > 0)).map((event) => event.place)];
        for (const place of [...again, ...result.deliver.map((delivery) => delivery.place)]) give(place);
      }
      // A failing batch is retried as it is (its deliveries were lost); a wake-up that failed comes again too.
    }
    if (connected !== undefined && connected.left <= 0) connected = undefined;
    if (connected === undefined) connect();
    const done = receivedIds.size === events.length && streamed === events.length;
    if (done) return { received, receivedIds, events, connections, late: lateEntries.length, converged: true };
  }
  // Not converged in time: one last resume that takes everything it is served must complete it.
  const converged = false;
  connected = undefined;
  params.takes = [Number.MAX_SAFE_INTEGER];
  connect();
  return { received, receivedIds, events, connections, late: lateEntries.length, converged };
}

describe('session order: random store orders, gaps, retries, drops and resumes', () => {
  it('loses no admitted event, always progresses, and keeps duplicates bounded', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 60 }).chain((count) =>
          fc.record({
            gaps: fc.array(fc.boolean(), { minLength: count, maxLength: count }),
            jitter: fc.array(fc.integer({ min: 0, max: 900 }), { minLength: count, maxLength: count }),
            batchSizes: fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 8 }),
            failures: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }).map((flags) => flags.map((flag, index) => flag && index % 3 === 0)),
            bisect: fc.boolean(),
            takes: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
          }),
        ),
        (params) => {
          const fewestTaken = Math.min(...params.takes);
          const outcome = simulate(params);
          const missing = outcome.events.filter((event) => !outcome.receivedIds.has(event.id)).map((event) => event.place.seq);
          expect(missing).toEqual([]);
          // Progress: a consumer that takes more per connection than there are late events
          // (each resume serves at most those before what it has not had) always converges.
          if (fewestTaken > outcome.late) {
            expect(outcome.converged).toBe(true);
            // Duplicates stay bounded: the late ones again on each resume, retried steps again.
            expect(outcome.received.length).toBeLessThanOrEqual(outcome.events.length * 4 + outcome.connections * outcome.late);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
