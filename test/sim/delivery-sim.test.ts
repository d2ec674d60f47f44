/**
 * The delivery simulation (`sim/`) as part of the suite: a fixed range of schedules, the same in
 * every run (a failure names its seed and replays with `npm run sim -- --seed S --schedules 1`);
 * the known defects it must keep finding are `delivery-sim-injections.test.ts`. The long run,
 * 100,000 schedules and more, is `npm run sim -- --schedules 100000` (docs/protocol-and-guarantees.md, Guarantees).
 */
import { describe, expect, it } from 'vitest';
import { failuresIn } from '../../sim/run-schedules.ts';

/** Schedules 1 to 1,000 here, 1,001 to 2,000 beside it (`delivery-sim-second-half.test.ts`), so two workers share them. */
const FIRST_SEED = 1;
const SCHEDULES = 1_000;
/**
 * Seeds beyond the range that long runs found broken, kept once mended. 17219: a step sent a late
 * event not yet known delivered ahead of the run it redelivers, so before an event released in
 * order below it (I3). 7024: sent after that whole run instead, it came after positions above its
 * late entry, and a consumer that dropped between them resumed past it (I2). 32275: late events
 * a step had delivered stayed pending in the stored state, so every runner that read it back (a
 * wake-up, another container) posted them again (I6). 27562 and 33176 broke invariants that asked
 * too much: a debug/info event one runner dropped toward a throttled consumer and another posted
 * later was taken for an order break (I3), and a post that landed in time, read by a consumer
 * that had stopped reading for 15 s, for relay delay (I5: the post's landing counts). 108948: an
 * event whose stream record the mapping discarded (past its maximum age) reached consumers
 * first as the emitter's retransmit, forwarded unmarked after higher positions (I3): a
 * redelivery is now a record of its event too, so one in a hole is the event's late arrival.
 * 9817: a consumer that stopped reading for 7.5 s had its connection ended for backpressure and
 * resumed once it read again, past the 30 s bound (I5 no longer counts such a pause).
 */
const FOUND_BY_LONG_RUNS = [17_219, 7_024, 32_275, 27_562, 33_176, 108_948, 9_817];

describe('the delivery simulation', () => {
  it(`breaks no invariant in schedules ${FIRST_SEED} to ${FIRST_SEED + SCHEDULES - 1}`, async () => {
    expect(await failuresIn(FIRST_SEED, SCHEDULES)).toEqual([]);
  }, 600_000);

  it.each(FOUND_BY_LONG_RUNS)('breaks no invariant in schedule %i, which a long run found broken', async (seed) => {
    expect(await failuresIn(seed, 1)).toEqual([]);
  });
});
