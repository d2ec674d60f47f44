/**
 * The known defects the delivery simulation must keep finding (`npm run sim -- --inject NAME`):
 * each is a patch putting one defect back into a copy of the tree. A search from seed 1
 * (`npm run sim -- --inject NAME --schedules 5000 --stop-at-first`) found each at the seed below;
 * the suite plays that schedule against the defect, which must break an invariant, and against
 * the relay as it is, which must not (so the defect is what breaks it). A change to the
 * simulation's scenarios moves the seeds: search again and write the new one here.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { injectionNames } from '../../sim/injections/inject.ts';
import { failuresIn } from '../../sim/run-schedules.ts';

/** The first seed from 1 whose schedule breaks an invariant with the defect put back. */
const FOUND_AT: Record<string, number> = {
  'retry-redelivers-nothing': 1,
  'stuck-replay': 2,
  'redelivery-forwarded-at-once': 55,
  'lost-hello-reply': 1,
  'first-epoch-released-blind': 549,
  'gap-check-limit-before-filter': 1399,
};

describe('the delivery simulation against a known defect', () => {
  it('knows the seed of every injection', () => {
    expect(Object.keys(FOUND_AT).sort()).toEqual(injectionNames());
  });

  it.each(Object.entries(FOUND_AT))('finds the injected defect %s at seed %i, which the relay as it is passes', async (name, seed) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--inject', name, '--seed', String(seed), '--schedules', '1', '--no-shrink'], { encoding: 'utf8', timeout: 120_000 });
    // A patch that no longer applies says so on stderr; show it rather than an empty stdout.
    expect(run.status, run.stdout.slice(-2000) + run.stderr.slice(-2000)).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`^seed ${seed} I[1-7] `, 'm'));
    expect(await failuresIn(seed, 1)).toEqual([]);
  }, 120_000);

  it('lists its injections, one per line', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--inject', 'list'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(injectionNames());
  });
});
