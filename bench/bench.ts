/**
 * `npm run bench`: bench/run.ts with the arguments given, then the lanes stage after a full run.
 * npm appends `npm run bench -- <args>` to the end of the script, so a script of two commands
 * (`tsx bench/run.ts && tsx bench/lanes-stage.ts`) handed `--report-only` to the lanes stage
 * alone, and `bench/run.ts` measured everything: this entry forwards the arguments to run.ts and
 * runs the lanes stage only when nothing narrower (`--report-only`, `--only`, `--history-only`) was asked.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchArguments } from './bench-arguments.ts';

// Checked here too (the same definition run.ts uses), so `--help` or a misspelt flag runs nothing.
const { only, reportOnly } = benchArguments();
const args = process.argv.slice(2);
const narrowed = only !== undefined || reportOnly;
/** Runs a bench script in a child Node with the same loader (tsx) as this one; its exit status. */
const script = (name: string, extra: readonly string[]) => spawnSync(process.execPath, [...process.execArgv, fileURLToPath(new URL(name, import.meta.url)), ...extra], { stdio: 'inherit' }).status ?? 1;

const status = script('./run.ts', args);
if (status !== 0 || narrowed) process.exit(status);
process.exit(script('./lanes-stage.ts', []));
