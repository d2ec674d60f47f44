/**
 * `npm run bench:lanes` (also `npm run bench -- --only lanes`): the fan-out lanes stage alone
 * (`fanout-lanes.ts`), on stacks of its own (one per worker count and round), merged into
 * bench/results.json as `fanoutLanes` with every other stage's figures kept, and BENCHMARKS.md
 * re-rendered. Environment: BENCH_LANES_REPEATS (rounds: bursts per worker count and size, one
 * a round, each round every worker count on a fresh stack, default 7: the report states their median), BENCH_LANES_DELIVERIES
 * (deliveries per run, default 100,000), BENCH_LANES_SIZES (subscribers, default
 * 1000,5000,10000), BENCH_LANES_WORKERS (default 1,2,4), BENCH_LANES_POST_MS (the stand-in's round trip, default 20), BENCH_LANES_LANE_DELIVERIES
 * (`AEP_FANOUT_LANE_DELIVERIES`, default 250: below a quarter of the smallest batch, so every
 * batch splits into W lanes). `npm run bench` runs it after the other stages (it starts stacks of its own).
 */
import { loadavg } from 'node:os';
import { runFanoutLanes } from './fanout-lanes.ts';
import { divertHandlerLogs } from './handler-log.ts';
import { readSavedResults, writeOutputs } from './outputs.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';

scriptArguments({
  command: 'npm run bench:lanes --',
  usage: `Usage: npm run bench:lanes

The fan-out lanes stage alone, on stacks of its own, merged into bench/results.json as fanoutLanes
(every other stage's figures kept) and BENCHMARKS.md re-rendered. It takes no arguments; its
knobs are environment variables: BENCH_LANES_REPEATS, BENCH_LANES_DELIVERIES, BENCH_LANES_SIZES,
BENCH_LANES_WORKERS, BENCH_LANES_POST_MS, BENCH_LANES_LANE_DELIVERIES (bench/lanes-stage.ts).`,
  config: { options: {} },
});

const startedAt = performance.now();
const log = (message: string) => process.stderr.write(`[lanes ${((performance.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

const list = (name: string, fallback: string) => {
  const values = (process.env[name] ?? fallback).split(',').map(Number);
  if (values.length === 0 || values.some((value) => !Number.isSafeInteger(value) || value <= 0)) throw new Error(`${name} must be a comma-separated list of positive integers`);
  return values;
};
const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

const handlerLog = divertHandlerLogs('aep-bench-lanes-');

log(`1-minute load average ${(loadavg()[0] ?? 0).toFixed(2)}`);
const result = await runFanoutLanes({
  workers: list('BENCH_LANES_WORKERS', '1,2,4'),
  sizes: list('BENCH_LANES_SIZES', '1000,5000,10000'),
  deliveriesPerRun: positive('BENCH_LANES_DELIVERIES', 100_000),
  repeats: count('BENCH_LANES_REPEATS', 7),
  postMs: positive('BENCH_LANES_POST_MS', 20),
  laneDeliveries: positive('BENCH_LANES_LANE_DELIVERIES', 250),
  log,
});
const saved = readSavedResults();
saved.fanoutLanes = result;
for (const path of writeOutputs(saved)) process.stderr.write(`  ${path}\n`);
log(`done in ${result.durationSeconds.toFixed(0)} s (1-minute load average now ${(loadavg()[0] ?? 0).toFixed(2)}); handler logs: ${handlerLog.path}`);
handlerLog.end();
// DynamoDB Local's JVM and keep-alive sockets are gone; exit without waiting on stray timers.
process.exit(0);
