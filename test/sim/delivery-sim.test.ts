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
 * late entry, and a consumer that dropped between them resumed past it (I2).
 */
const FOUND_BY_LONG_RUNS = [17_219, 7_024];

describe('the delivery simulation', () => {
  it(`breaks no invariant in schedules ${FIRST_SEED} to ${FIRST_SEED + SCHEDULES - 1}`, async () => {
    expect(await failuresIn(FIRST_SEED, SCHEDULES)).toEqual([]);
  }, 600_000);

  it.each(FOUND_BY_LONG_RUNS)('breaks no invariant in schedule %i, which a long run found broken', async (seed) => {
    expect(await failuresIn(seed, 1)).toEqual([]);
  });
});
