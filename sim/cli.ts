/**
 * `npm run sim -- --schedules N [--seed S] [--inject NAME | --inject list] [--trace]`
 *
 * Plays N schedules of the delivery simulation from seed S (default 1): one line per violation
 * with its seed, then the shrunk scenario's trace for each failing seed, and at the end
 * `N schedules, V violations`. `--inject NAME` plays them against the relay with one known defect
 * put back (`sim/injections/`), which the simulation must find; `--inject list` names them.
 * Exit code 0 when no schedule broke an invariant, 1 when one did, 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { injectionNames, runInjected } from './injections/inject.ts';
import { runOne } from './run-schedules.ts';

const usage = 'usage: npm run sim -- --schedules N [--seed S] [--inject NAME | --inject list] [--trace] [--no-shrink]';

function fail(message: string): never {
  process.stderr.write(`${message}\n${usage}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      schedules: { type: 'string' },
      seed: { type: 'string' },
      inject: { type: 'string' },
      trace: { type: 'boolean' },
      'no-shrink': { type: 'boolean' },
      'stop-at-first': { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  }));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
if (values.help === true) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (values.inject === 'list') {
  for (const name of injectionNames()) process.stdout.write(`${name}\n`);
  process.exit(0);
}
if (values.inject !== undefined) {
  if (!injectionNames().includes(values.inject)) fail(`unknown injection ${values.inject}; --inject list names them`);
  const forwarded = process.argv.slice(2).filter((argument, index, all) => argument !== '--inject' && all[index - 1] !== '--inject' && !argument.startsWith('--inject='));
  process.exit(await runInjected(values.inject, forwarded));
}

const schedules = Number(values.schedules ?? '1');
const firstSeed = Number(values.seed ?? '1');
if (!Number.isSafeInteger(schedules) || schedules < 1) fail('--schedules takes a positive integer');
if (!Number.isSafeInteger(firstSeed)) fail('--seed takes an integer');

const startedAt = Date.now();
let violations = 0;
let failing = 0;
let played = 0;
for (let seed = firstSeed; seed < firstSeed + schedules; seed += 1) {
  played += 1;
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
