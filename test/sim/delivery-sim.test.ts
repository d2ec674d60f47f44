/**
 * The delivery simulation (`sim/`) as part of the suite: a fixed range of schedules, the same in
 * every run (a failure names its seed and replays with `npm run sim -- --seed S --schedules 1`),
 * and the known defects it must keep finding (`npm run sim -- --inject NAME`). The long run,
 * 100,000 schedules and more, is `npm run sim -- --schedules 100000` (docs/protocol-and-guarantees.md, Guarantees).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { injectionNames } from '../../sim/injections/inject.ts';
import { failuresIn } from '../../sim/run-schedules.ts';

/** Schedules 1 to 1,000 here, 1,001 to 2,000 beside it (`delivery-sim-second-half.test.ts`), so two workers share them. */
const FIRST_SEED = 1;
const SCHEDULES = 1_000;

describe('the delivery simulation', () => {
  it(`breaks no invariant in schedules ${FIRST_SEED} to ${FIRST_SEED + SCHEDULES - 1}`, async () => {
    expect(await failuresIn(FIRST_SEED, SCHEDULES)).toEqual([]);
  }, 600_000);

  // How many schedules each defect may take to show (the seed that found it last, with room).
  // `gap-check-limit-before-filter` needs shared session names, gaps and a discarded record at
  // once (found at seed 3188 of the long run): the long run's to find, not the suite's.
  const within: Record<string, number> = { 'first-epoch-released-blind': 1_000 };
  const quick = injectionNames().filter((name) => name !== 'gap-check-limit-before-filter');
  it.each(quick)('finds the injected defect %s', (name) => {
    const schedules = String(within[name] ?? 500);
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--inject', name, '--schedules', schedules, '--stop-at-first', '--no-shrink'], { encoding: 'utf8', timeout: 300_000 });
    expect(run.status, run.stdout.slice(-2000) + run.stderr.slice(-2000)).toBe(1);
    expect(run.stdout, run.stderr.slice(-2000)).toMatch(/^seed \d+ I[1-7] /m);
  }, 300_000);

  it('lists its injections, one per line', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--inject', 'list'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(injectionNames());
    expect(injectionNames()).toEqual(expect.arrayContaining(['retry-redelivers-nothing', 'gap-check-limit-before-filter', 'first-epoch-released-blind', 'lost-hello-reply']));
  });
});
