/**
 * `npm run sim -- --schedules N [--seed S] [--inject NAME | --inject list] [--trace]` (usage below).
 *
 * Plays N schedules of the delivery simulation from seed S (default 1): one line per violation
 * with its seed, then the shrunk scenario's trace for each failing seed, and at the end
 * `N schedules, V violations`. `--inject NAME` plays them against the relay with one known defect
 * put back (`sim/injections/`), which the simulation must find; `--inject list` names them.
 * Exit code 0 when no schedule broke an invariant, 1 when one did, 2 on a usage error.
 */
import { UsageError } from '../bin/cli/cli-arguments.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';
import { injectionNames, runInjected } from './injections/inject.ts';

const USAGE = `Usage: npm run sim -- --schedules N [--seed S] [--inject NAME | --inject list] [--trace] [--no-shrink] [--stop-at-first]

Plays N schedules of the delivery simulation, schedule S first (default 1), and prints one line per
invariant a schedule breaks, with its seed, then the shrunk scenario and its trace.

  --schedules N     how many schedules (default 1)
  --seed S          the first schedule's seed (default 1); --schedules 1 --seed S replays one
  --inject NAME     play them against the relay with a known defect put back; list: their names
  --trace           print the trace of every failing schedule, not only the first three
  --no-shrink       report failures as found, without shrinking them
  --stop-at-first   stop at the first failing schedule

Exit codes: 0 no schedule broke an invariant, 1 one did, 2 usage.`;

const { values } = scriptArguments({
  command: 'npm run sim --',
  usage: USAGE,
  config: {
    options: {
      schedules: { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      inject: { type: 'string' },
      trace: { type: 'boolean' },
      'no-shrink': { type: 'boolean' },
      'stop-at-first': { type: 'boolean' },
    },
  },
  check: ({ values: parsed }) => {
    if (!/^[1-9]\d*$/.test(parsed.schedules)) throw new UsageError(`--schedules takes a positive integer, got ${JSON.stringify(parsed.schedules)}`);
    if (!/^-?\d+$/.test(parsed.seed)) throw new UsageError(`--seed takes an integer, got ${JSON.stringify(parsed.seed)}`);
    if (parsed.inject !== undefined && parsed.inject !== 'list' && !injectionNames().includes(parsed.inject)) throw new UsageError(`unknown injection ${parsed.inject}; --inject list names them`);
  },
});
if (values.inject === 'list') {
  for (const name of injectionNames()) process.stdout.write(`${name}\n`);
  process.exit(0);
}
if (values.inject !== undefined) {
  const forwarded = process.argv.slice(2).filter((argument, index, all) => argument !== '--inject' && all[index - 1] !== '--inject' && !argument.startsWith('--inject='));
  process.exit(await runInjected(values.inject, forwarded));
}

// Loaded only here: `--inject` plays the schedules in a child process on the injected tree.
const { runOne } = await import('./run-schedules.ts');
const schedules = Number(values.schedules);
const firstSeed = Number(values.seed);

const startedAt = Date.now();
let violations = 0;
let failing = 0;
let played = 0;
for (let seed = firstSeed; seed < firstSeed + schedules; seed += 1) {
  played += 1;
  // A long run says how far it got, on stderr, so a run that is stopped still reports its range.
  if (played % 1_000 === 0) process.stderr.write(`${played} schedules (to seed ${seed}), ${violations} violations, ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`);
  const failure = await runOne(seed, { shrink: values['no-shrink'] !== true });
  if (failure === undefined) continue;
  failing += 1;
  violations += failure.violations.length;
  for (const violation of failure.violations) process.stdout.write(`seed ${seed} ${violation.invariant} ${violation.detail}\n`);
  if (values.trace === true || failing <= 3) {
    process.stdout.write(`  shrunk scenario of seed ${seed}: ${JSON.stringify(failure.shrunk)}\n`);
    for (const violation of failure.shrunkViolations) process.stdout.write(`  shrunk ${violation.invariant} ${violation.detail}\n`);
    for (const line of failure.trace) process.stdout.write(`  | ${line}\n`);
  }
  if (values['stop-at-first'] === true) break;
}
process.stdout.write(`${played} schedules, ${violations} violations (${failing} failing schedules, ${((Date.now() - startedAt) / 1000).toFixed(1)} s)\n`);
process.exit(violations === 0 ? 0 : 1);
