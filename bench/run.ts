/**
 * `npm run bench`: what an event costs and how fast it moves on the local stack (DynamoDB Local,
 * the local API Gateway, the real handlers), written to bench/results.json and BENCHMARKS.md.
 * Each stage runs once; `--only <stage>` measures one stage and merges it into the saved results;
 * `--report-only` re-renders BENCHMARKS.md. BENCH_QUICK=1 is a smoke run with fewer events (not
 * for committing). The lanes stage starts stacks of its own, so a full run ends by running this
 * script again with `--only lanes`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem, type } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../bin/cli/cli-arguments.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';
import { startStack } from '../local/stack.ts';
import type { RunningStack } from '../local/stack.ts';
import { renderMarkdown } from './report.ts';
import type { BenchResults } from './report.ts';
import { runBridgeCost } from './stages/bridges.ts';
import { measureStanding, runCostGroup, runSweepScenario } from './stages/cost.ts';
import { runCpuBenchmark } from './stages/cpu.ts';
import { measureFreshSession } from './stages/fresh-session.ts';
import { measureHistory } from './stages/history.ts';
import { runFanoutLanes } from './stages/lanes.ts';
import { measureCommandRoundTrip, measureDeliveryLatency } from './stages/latency.ts';
import { measureReconnectingConsumer } from './stages/reconnect.ts';
import { measureSseStreamHour } from './stages/sse-hour.ts';
import { measureOverload } from './stages/overload.ts';

const STAGES = ['cost', 'cpu', 'sse-hour', 'latency', 'reconnect', 'fresh', 'history', 'bridges', 'lanes', 'overload'] as const;
type Stage = (typeof STAGES)[number];

const { values } = scriptArguments({
  command: 'npm run bench --',
  usage: `Usage: npm run bench [-- --only <stage> | --report-only]

Measures cost per event, latency, CPU and fan-out scaling on the local stack, and writes
bench/results.json and BENCHMARKS.md (environment knobs: bench/run.ts).

  --only <stage>   measure one stage and merge it into bench/results.json: ${STAGES.join(', ')}
  --report-only    re-render BENCHMARKS.md from bench/results.json, measuring nothing`,
  config: { options: { only: { type: 'string' }, 'report-only': { type: 'boolean' } } },
  check: ({ values: given }) => {
    if (given.only !== undefined && !(STAGES as readonly string[]).includes(given.only)) throw new UsageError(`--only takes ${STAGES.join(', ')}, not ${given.only}`);
  },
});
const only = values.only as Stage | undefined;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const resultsPath = join(repoRoot, 'bench', 'results.json');
const startedAt = performance.now();
const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
const git = (args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};
const saved = (): BenchResults => JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchResults;
function write(results: BenchResults, measured: boolean): void {
  if (measured) writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(repoRoot, 'BENCHMARKS.md'), renderMarkdown(results));
  log(`wrote ${measured ? 'bench/results.json and ' : ''}BENCHMARKS.md`);
}

if (values['report-only'] === true) {
  write(saved(), false);
  process.exit(0);
}

const quick = process.env.BENCH_QUICK === '1';
const knob = (name: string, full: number, smoke: number) => {
  const value = Number(process.env[name] ?? (quick ? smoke : full));
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map(Number);
const EVENTS = knob('BENCH_EVENTS', 1000, 200);
const SUBSCRIBERS = quick ? [0, 1, 10] : [0, 1, 10, 100];
const SWEEPS = quick ? [0, 10, 100] : [0, 10, 100, 1000];
const LATENCY = { events: knob('BENCH_LATENCY_EVENTS', 500, 100), paceMs: 30, commands: knob('BENCH_COMMANDS', 200, 40) };
const SSE_HOUR = { idleSeconds: knob('BENCH_SSE_IDLE_S', 121, 45), burstEvents: knob('BENCH_SSE_BURST', 300, 100) };
const HISTORY = { events: knob('BENCH_HISTORY_EVENTS', 3000, 500), sessions: knob('BENCH_HISTORY_SESSIONS', 200, 50) };
const ROUNDS = { rounds: knob('BENCH_ROUNDS', 5, 2), events: 200 };
const LANES = { workers: list('BENCH_LANES_WORKERS', '1,2,4'), sizes: list('BENCH_LANES_SIZES', quick ? '1000' : '1000,5000,10000'), deliveriesPerRun: knob('BENCH_LANES_DELIVERIES', 100_000, 20_000), postMs: 20, laneDeliveries: 250 };
const IDLE_SECONDS = quick ? 5 : 30;
const settings = {
  AEP_LOCAL_POLL_MS: 100,
  AEP_LOCAL_WS_JITTER_MS: 5,
  // The deployed inbox poll, so the SSE latency is what a deployment sees.
  AEP_SSE_POLL_MS: 250,
  // A stream whose client left polls on until its idle end: short, so the latency stage's streams stop soon.
  AEP_SSE_IDLE_END_MS: 10_000,
  'events per cost scenario': EVENTS,
  'subscriber counts / unmatchable subscriptions': `${SUBSCRIBERS.join(', ')} / ${SWEEPS.join(', ')}`,
  'latency: events, mean pace, commands': `${LATENCY.events}, ${LATENCY.paceMs} ms, ${LATENCY.commands}`,
  'SSE stream-hour: idle, burst': `${SSE_HOUR.idleSeconds} s, ${SSE_HOUR.burstEvents}`,
  'history events / sessions': `${HISTORY.events} / ${HISTORY.sessions}`,
  'fresh-session and reconnect rounds × events': `${ROUNDS.rounds} × ${ROUNDS.events}`,
  'lanes: W / S / deliveries per burst': `${LANES.workers.join(', ')} / ${LANES.sizes.join(', ')} / ${LANES.deliveriesPerRun}`,
};

// The handlers log a JSON line per request and EMF metrics to stdout: into a file instead.
const logDir = mkdtempSync(join(tmpdir(), 'aep-bench-'));
const handlerLog = createWriteStream(join(logDir, 'handlers.log'));
const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.startsWith('{"level":') || text.startsWith('{"_aws":')) return handlerLog.write(text);
  return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

const OVERLOAD = { sockets: knob('BENCH_FLOOD_SOCKETS', 40, 10), framesPerSocket: knob('BENCH_FLOOD_FRAMES', 100, 50), consumers: 10, canaryEvents: knob('BENCH_CANARY_EVENTS', 100, 30) };
if (only === 'overload') {
  const overload = await measureOverload({ ...OVERLOAD, dataDir: join(logDir, 'overload'), log });
  write({ ...saved(), overload }, true);
  process.exit(0);
}
if (only === 'lanes') {
  const lanes = await runFanoutLanes({ ...LANES, log });
  write({ ...saved(), lanes }, true);
  process.exit(0);
}

const stages: Record<Exclude<Stage, 'lanes' | 'cpu' | 'overload'>, (stack: RunningStack) => Promise<Partial<BenchResults>>> = {
  cost: async (stack) => {
    await runCostGroup(stack, 2, [{ path: 'single', events: 100 }, { path: 'batch100', events: 200 }, { path: 'websocket', events: 100 }]); // warm-up
    const costGrid = [];
    for (const subscribers of SUBSCRIBERS) {
      log(`cost: ${subscribers} subscribers, three ingest paths`);
      costGrid.push(...(await runCostGroup(stack, subscribers, [{ path: 'single', events: EVENTS }, { path: 'batch100', events: EVENTS }, { path: 'websocket', events: EVENTS }])));
    }
    const sweeps = [];
    for (const kind of ['session-unmatched', 'type-unmatched'] as const) for (const unmatched of SWEEPS) sweeps.push(await runSweepScenario(stack, kind, unmatched, 500));
    log(`standing: an idle WebSocket subscriber for ${IDLE_SECONDS} s`);
    return { costGrid, sweeps, standing: await measureStanding(stack, IDLE_SECONDS) };
  },
  'sse-hour': async (stack) => {
    log(`SSE stream-hour: ${SSE_HOUR.idleSeconds} s idle, ${SSE_HOUR.burstEvents} events`);
    return { sseHour: await measureSseStreamHour(stack, { ...SSE_HOUR, log }) };
  },
  latency: async (stack) => {
    log('latency: WebSocket, SSE, command round trips');
    const websocket = await measureDeliveryLatency(stack, 'websocket', LATENCY.events, LATENCY.paceMs);
    const sse = await measureDeliveryLatency(stack, 'sse', LATENCY.events, LATENCY.paceMs);
    return { latency: { delivery: { paceMs: LATENCY.paceMs, websocket, sse }, command: await measureCommandRoundTrip(stack, LATENCY.commands, settings.AEP_LOCAL_POLL_MS) } };
  },
  reconnect: async (stack) => ({ reconnect: await measureReconnectingConsumer(stack, ROUNDS) }),
  fresh: async (stack) => ({ fresh: await measureFreshSession(stack, { ...ROUNDS, pollMs: settings.AEP_LOCAL_POLL_MS }) }),
  history: async (stack) => ({ history: await measureHistory(stack, HISTORY.events, HISTORY.sessions) }),
  bridges: async (stack) => {
    const bridges = [];
    for (const scenario of ['none', 'cloudevents-webhook', 'otlp', 'ocsf-webhook', 'all three'] as const) bridges.push(await runBridgeCost(stack, scenario, EVENTS));
    return { bridges };
  },
};

const head = git(['rev-parse', 'HEAD']) || 'unknown';
const runInfo = (): BenchResults['run'] => ({
  date: new Date().toISOString(),
  commit: head,
  dirty: git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)BENCHMARKS.md', ':(exclude)bench/results.json']) !== '',
  machine: `${type()} ${release()}; ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}; ${(totalmem() / 1024 ** 3).toFixed(1)} GiB; Node ${process.version}`,
  runtimeSeconds: (performance.now() - startedAt) / 1000,
  settings,
});

// The CPU stage first, before the stack runs on the same cores.
let results: Partial<BenchResults> = only === undefined || only === 'cpu' ? { cpu: (log('handler CPU over the golden corpus'), runCpuBenchmark(quick ? 500 : 1500)) } : {};
if (only !== 'cpu') {
  log('starting the local stack');
  const stack = await startStack({
    port: 0,
    inMemory: true,
    dataDir: join(logDir, 'data'),
    env: {
      AEP_LOCAL_POLL_MS: String(settings.AEP_LOCAL_POLL_MS),
      AEP_LOCAL_WS_JITTER_MS: String(settings.AEP_LOCAL_WS_JITTER_MS),
      AEP_SSE_POLL_MS: String(settings.AEP_SSE_POLL_MS),
      AEP_SSE_IDLE_END_MS: String(settings.AEP_SSE_IDLE_END_MS),
      // The bench pipelines more frames on a socket than a connection's budget passes; the budget costs no DynamoDB call.
      AEP_SOCKET_FRAMES_PER_SECOND: '0',
    },
  });
  try {
    for (const [name, stage] of Object.entries(stages)) if (only === undefined || only === name) results = { ...results, ...(await stage(stack)) };
    if (stack.streamFailures.length > 0) throw new Error(`the fan-out mapping discarded ${stack.streamFailures.length} batches; see ${logDir}`);
  } finally {
    await stack.stop();
    handlerLog.end();
  }
}
const base = only === undefined || !existsSync(resultsPath) ? {} : saved();
write({ ...base, ...results, run: only === undefined ? runInfo() : { ...(base as BenchResults).run, settings } } as BenchResults, true);
log(`done; handler logs in ${logDir}`);
if (only === undefined) {
  for (const stage of ['lanes', 'overload']) {
    log(`the ${stage} stage, on stacks of its own`);
    const status = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--only', stage], { stdio: 'inherit' }).status;
    if (status !== 0) process.exit(status ?? 1);
  }
}
process.exit(0);
