/**
 * `npm test`: the whole suite, as CI runs it (`.ci/run`). A script of several commands would
 * hand `npm test -- <args>` to its last command only, after running the others (the typecheck
 * and every test file for `npm test -- --help`), so the steps are run from here, after the
 * command line was checked: `--help` prints what runs, anything else is refused.
 */
import { spawn } from 'node:child_process';
import { scriptArguments } from './cli/script-arguments.ts';

/** Files run last and one at a time: the noisy-neighbour and overload tests load a stack of their own to its bounds, and the machine with it (docs/development.md "The test suite"). */
const ALONE = ['test/reliability/overload.test.ts', 'test/reliability/noisy-'];

/** Steps that run at once (a step is its commands, side by side), each after the one before passed. */
const STEPS: ReadonlyArray<ReadonlyArray<readonly string[]>> = [
  // The typecheck is one core's work; the files spend much of their time waiting on the local stack.
  [
    ['npm', 'run', 'typecheck'],
    ['vitest', 'run', '--maxWorkers=2', ...ALONE.flatMap((file) => ['--exclude', file.endsWith('-') ? `${file}*.test.ts` : file])],
  ],
  [['vitest', 'run', '--no-file-parallelism', ...ALONE]],
];

scriptArguments({
  command: 'npm test --',
  usage: `Usage: npm test

Runs, in order, stopping at the first that fails:
${STEPS.map((step) => `  ${step.map((command) => command.join(' ')).join('\n    and beside it: ')}`).join('\n')}
It takes no arguments; run one file with npx vitest run <file>.`,
  config: { options: {} },
});

/**
 * The suite starts DynamoDB Local some thirty times, each for a minute or less: the JVM's
 * optimizing compiler (C2) spends more CPU on such a run than it gives back (the client compiler
 * alone cut the CPU of two stack-starting files by 30%), and on two cores that CPU is the suite's time.
 */
const SHORT_LIVED_JVM = { JAVA_TOOL_OPTIONS: `${process.env.JAVA_TOOL_OPTIONS ?? ''} -XX:TieredStopAtLevel=1`.trim() };

function run([command, ...args]: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    spawn(command as string, args, { stdio: 'inherit', env: { ...process.env, ...SHORT_LIVED_JVM } }).once('close', (status, signal) => resolve(status ?? (signal === null ? 1 : 128)));
  });
}

for (const step of STEPS) {
  const failed = (await Promise.all(step.map(run))).find((status) => status !== 0);
  if (failed !== undefined) process.exit(failed);
}
