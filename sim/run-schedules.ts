/**
 * Runs schedules of the delivery simulation: schedule `s` is the scenario fast-check draws from
 * seed `s`, played once. A schedule that breaks an invariant is shrunk by fast-check to the
 * smallest scenario that still breaks it, and reported with its seed and that scenario's trace.
 */
import fc from 'fast-check';
import { checkInvariants } from './world/invariants.ts';
import type { Violation } from './world/invariants.ts';
import { scenarioArbitrary } from './world/scenario.ts';
import type { Scenario } from './world/scenario.ts';
import { runSchedule } from './world/world.ts';
import type { Observation } from './world/world.ts';

export interface ScheduleFailure {
  seed: number;
  violations: Violation[];
  /** The shrunk scenario that still fails, and its trace. */
  shrunk: Scenario;
  shrunkViolations: Violation[];
  trace: string[];
}

export interface RunOptions {
  /** Shrink failures (slower; off for a quick count). */
  shrink?: boolean;
  onSchedule?: (seed: number, observation: Observation, violations: Violation[]) => void;
}

/** The scenario schedule `seed` plays. */
export function scenarioOf(seed: number): Scenario {
  const [scenario] = fc.sample(scenarioArbitrary, { seed, numRuns: 1 });
  return scenario as Scenario;
}

export async function playSchedule(scenario: Scenario): Promise<{ observation: Observation; violations: Violation[] }> {
  const observation = await runSchedule(scenario);
  return { observation, violations: checkInvariants(observation) };
}

/** One schedule; a failure comes back shrunk. */
export async function runOne(seed: number, options: RunOptions = {}): Promise<ScheduleFailure | undefined> {
  const scenario = scenarioOf(seed);
  const { observation, violations } = await playSchedule(scenario);
  options.onSchedule?.(seed, observation, violations);
  if (violations.length === 0) return undefined;
  if (options.shrink === false) return { seed, violations, shrunk: scenario, shrunkViolations: violations, trace: observation.trace };
  const invariants = new Set(violations.map((violation) => violation.invariant));
  // fast-check shrinks the scenario drawn from this seed, keeping only smaller ones that fail the same way.
  const result = await fc.check(
    fc.asyncProperty(scenarioArbitrary, async (candidate) => {
      const played = await playSchedule(candidate);
      return !played.violations.some((violation) => invariants.has(violation.invariant));
    }),
    { seed, numRuns: 1, endOnFailure: false, maxSkipsPerRun: 0 },
  );
  const shrunk = (result.counterexample?.[0] as Scenario | undefined) ?? scenario;
  const replay = await playSchedule(shrunk);
  return { seed, violations, shrunk, shrunkViolations: replay.violations, trace: replay.observation.trace };
}

/** The first few failing schedules of a seed range, one line each (unshrunk): what the suite asserts empty. */
export async function failuresIn(firstSeed: number, schedules: number, most = 3): Promise<string[]> {
  const failures: string[] = [];
  for (let seed = firstSeed; seed < firstSeed + schedules && failures.length < most; seed += 1) {
    const failure = await runOne(seed, { shrink: false });
    if (failure !== undefined) failures.push(`seed ${seed}: ${failure.violations.slice(0, 3).map((violation) => `${violation.invariant} ${violation.detail}`).join('; ')}`);
  }
  return failures;
}
