/** Schedules 1,001 to 2,000 of the suite's fixed range (the first half, and the injections, are in `delivery-sim.test.ts`). */
import { describe, expect, it } from 'vitest';
import { failuresIn } from '../../sim/run-schedules.ts';

describe('the delivery simulation, second half', () => {
  it('breaks no invariant in schedules 1001 to 2000', async () => {
    expect(await failuresIn(1_001, 1_000)).toEqual([]);
  }, 600_000);
});
