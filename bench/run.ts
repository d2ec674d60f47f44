/**
 * `npm run bench`: cost per event, latency, and how they grow. Starts the local stack in this
 * process (DynamoDB Local, the local API Gateway, the real handlers, the stream poller), runs
 * the scenarios, and writes BENCHMARKS.md, bench/results.json and the SVG plots.
 *
 * Environment: BENCH_EVENTS (events per batch and WebSocket cost scenario, default 1000),
 * BENCH_SINGLE_EVENTS (events per single-POST scenario, default 1000), BENCH_LATENCY_EVENTS (default 500), BENCH_COMMANDS (default 200),
 * BENCH_HISTORY_EVENTS (events read back through GET /history, default 3000), BENCH_HISTORY_SESSIONS
 * (sessions listed, default 200), BENCH_QUICK=1 (a fast smoke run with fewer events and subscribers;
 * not for committing). `--history-only` measures history alone and merges it into bench/results.json.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem, type } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../local/stack.ts';
import { INGEST_LABELS, runCostGroup, runSweepScenario, measureStanding, settle } from './cost.ts';
import type { CostRun, IngestPath, PhasePlan, SweepRun } from './cost.ts';
import { loadavg } from 'node:os';
import { runCpuBenchmarkRepeated } from './cpu.ts';
import { runFanoutScale } from './fanout-scale.ts';
import { runPausedConsumer } from './paused-consumer.ts';
import { runBridgeCost } from './bridges.ts';
import type { BridgeCostRun } from './bridges.ts';
import { measureHistory } from './history.ts';
import { measureCommandRoundTrip, measureDeliveryLatency } from './latency.ts';
import { renderMarkdown, renderSvgs } from './report.ts';
import type { BenchResults } from './report.ts';

const startedAt = performance.now();
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The `npm run load` section of the current BENCHMARKS.md, kept when the rest is rewritten. */
function loadSection(): string {
  const path = join(repoRoot, 'BENCHMARKS.md');
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const start = text.indexOf('<!-- load:start -->');
  const end = text.indexOf('<!-- load:end -->');
  return start === -1 || end === -1 ? '' : `\n${text.slice(start, end + '<!-- load:end -->'.length)}\n`;
}

function writeOutputs(results: BenchResults): string[] {
  const outputs: Array<[string, string]> = [
    [join(repoRoot, 'BENCHMARKS.md'), renderMarkdown(results) + loadSection()],
    [join(repoRoot, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`],
    ...Object.entries(renderSvgs(results)).map(([name, svg]): [string, string] => [join(repoRoot, 'bench', name), svg]),
  ];
  for (const [path, content] of outputs) writeFileSync(path, content);
  return outputs.map(([path]) => relative(process.cwd(), path) || path);
}

// `--report-only`: re-render BENCHMARKS.md and the plots from bench/results.json, measuring nothing.
if (process.argv.includes('--report-only')) {
  const saved = JSON.parse(readFileSync(join(repoRoot, 'bench', 'results.json'), 'utf8')) as BenchResults;
  for (const path of writeOutputs(saved)) process.stderr.write(`  ${path}\n`);
  process.exit(0);
}
const quick = process.env.BENCH_QUICK === '1';
const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};
const EVENTS = positive('BENCH_EVENTS', quick ? 200 : 1000);
const SINGLE_EVENTS = positive('BENCH_SINGLE_EVENTS', quick ? 100 : 1000);
const SWEEP_EVENTS = positive('BENCH_SWEEP_EVENTS', quick ? 200 : 500);
const LATENCY_EVENTS = positive('BENCH_LATENCY_EVENTS', quick ? 100 : 500);
const COMMANDS = positive('BENCH_COMMANDS', quick ? 40 : 200);
const HISTORY_EVENTS = positive('BENCH_HISTORY_EVENTS', quick ? 500 : 3000);
const HISTORY_SESSIONS = positive('BENCH_HISTORY_SESSIONS', quick ? 50 : 200);
// `--history-only`: measure history alone and merge it into bench/results.json.
const historyOnly = process.argv.includes('--history-only');
const SUBSCRIBER_COUNTS = quick ? [0, 1, 10] : [0, 1, 10, 100];
const SWEEP_COUNTS = quick ? [0, 10, 100] : [0, 10, 100, 1000];
const PACE_MS = 30;
const SCALE_SIZES = (process.env.BENCH_SCALE_SIZES ?? (quick ? '100,300' : '100,1000,5000')).split(',').map(Number).filter((size) => size > 0);
const SCALE_DELAYS = [20, 50];
/** Events per scale run: enough deliveries to time (at least ~20,000), one NDJSON request. */
const scaleEvents = (subscribers: number) => Math.max(10, Math.min(200, Math.round(50_000 / subscribers)));
const PAUSED = { events: quick ? 1000 : 5000, batch: 50, paceMs: 100, eventBytes: 2000 };
const CPU_REPEATS = quick ? 3 : 5;
const IDLE_SECONDS = quick ? 2 : 5;

const settings = {
  AEP_LOCAL_POLL_MS: 100,
  AEP_LOCAL_WS_JITTER_MS: 5,
  AEP_SSE_POLL_MS: 100,
  'events per cost scenario': SINGLE_EVENTS === EVENTS ? String(EVENTS) : `${SINGLE_EVENTS} (single POSTs), ${EVENTS} (NDJSON batches, WebSocket emits)`,
  'events per sweep scenario': SWEEP_EVENTS,
  'subscriber counts': SUBSCRIBER_COUNTS.join(', '),
  'unmatchable subscription counts (sweeps)': SWEEP_COUNTS.join(', '),
  'single-POST concurrency': 4,
  'WebSocket emit window (messages in flight)': 8,
  'latency events / pace': `${LATENCY_EVENTS} / one every ${PACE_MS} ms`,
  'commands timed (random pause between them)': `${COMMANDS} (0–100 ms)`,
  'idle window for standing costs': `${IDLE_SECONDS} s`,
  'history session events / sessions listed': `${HISTORY_EVENTS} / ${HISTORY_SESSIONS}`,
  'fan-out scale: subscribers / post round trips': `${SCALE_SIZES.join(', ')} / ${SCALE_DELAYS.join(', ')} ms`,
  'paused consumer: events / batch / pace / bytes': `${PAUSED.events} / ${PAUSED.batch} / ${PAUSED.paceMs} ms / ${PAUSED.eventBytes}`,
  'CPU stage repeats': CPU_REPEATS,
};

const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

// The handlers log a JSON line per request to stdout, and their metrics as EMF lines
// (`{"_aws":...`, src/observability/relay-metrics.ts); keep those out of the way (in a file).
const logDir = mkdtempSync(join(tmpdir(), 'aep-bench-'));
const handlerLog = createWriteStream(join(logDir, 'handlers.log'));
const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.startsWith('{"level":') || text.startsWith('{"_aws":')) return handlerLog.write(text);
  return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

// 1. Handler CPU, before anything else runs on the machine.
log('handler CPU over the golden corpus');
const cpu = runCpuBenchmarkRepeated(CPU_REPEATS, quick ? 500 : 1500, loadavg);
log(`  ${cpu.usPerEvent.pipeline.toFixed(1)} µs per event (median of ${CPU_REPEATS}: ${cpu.repeats?.pipelineUsPerEvent.map((value) => value.toFixed(1)).join(', ')})`);

// 2. The stack, in this process.
log('starting the local stack (DynamoDB Local takes a while)');
const stack = await startStack({
  port: 0,
  inMemory: true,
  dataDir: join(logDir, 'data'),
  env: {
    AEP_LOCAL_POLL_MS: String(settings.AEP_LOCAL_POLL_MS),
    AEP_LOCAL_WS_JITTER_MS: String(settings.AEP_LOCAL_WS_JITTER_MS),
    AEP_SSE_POLL_MS: String(settings.AEP_SSE_POLL_MS),
  },
});
let results: BenchResults;
if (historyOnly) {
  try {
    log(`history only: ${HISTORY_EVENTS} events, ${HISTORY_SESSIONS} sessions`);
    const saved = JSON.parse(readFileSync(join(repoRoot, 'bench', 'results.json'), 'utf8')) as BenchResults;
    saved.history = await measureHistory(stack, HISTORY_EVENTS, HISTORY_SESSIONS);
    saved.run.settings = { ...saved.run.settings, 'history session events / sessions listed': `${HISTORY_EVENTS} / ${HISTORY_SESSIONS}` };
    for (const path of writeOutputs(saved)) process.stderr.write(`  ${path}\n`);
  } finally {
    await stack.stop();
    handlerLog.end();
  }
  process.exit(0);
}
try {
  log(`stack ready at ${stack.baseUrl}; warming up`);
  await runCostGroup(stack, 2, [
    { path: 'single', events: 100 },
    { path: 'batch100', events: 200 },
    { path: 'websocket', events: 100 },
  ]);
  await settle(stack);

  const phases: PhasePlan[] = [
    { path: 'single', events: SINGLE_EVENTS },
    { path: 'batch100', events: EVENTS },
    { path: 'websocket', events: EVENTS },
  ];
  const costGrid: CostRun[] = [];
  for (const subscribers of SUBSCRIBER_COUNTS) {
    for (const run of await runCostGroup(stack, subscribers, phases)) {
      costGrid.push(run);
      log(`cost ${String(subscribers).padStart(3)} subscribers, ${INGEST_LABELS[run.ingest].padEnd(21)}: ${(run.usage.dynamo.writeUnits / run.events).toFixed(2)} WRU/event, ${((run.usage.dynamo.readUnits * 1000) / run.events).toFixed(0)} RRU/1000, ${run.receivedDeliveries}/${run.expectedDeliveries} deliveries, ${(run.wallMs / 1000).toFixed(1)} s`);
    }
  }
  const pathOrder: IngestPath[] = ['single', 'batch100', 'websocket'];
  costGrid.sort((a, b) => pathOrder.indexOf(a.ingest) - pathOrder.indexOf(b.ingest) || a.subscribers - b.subscribers);

  const sweeps: SweepRun[] = [];
  for (const kind of ['session-unmatched', 'type-unmatched'] as const) {
    for (const unmatched of SWEEP_COUNTS) {
      const run = await runSweepScenario(stack, kind, unmatched, SWEEP_EVENTS);
      sweeps.push(run);
      const fanout = run.usage.functions.fanout;
      log(`sweep ${kind} ${String(unmatched).padStart(4)}: fan-out ${fanout.readUnits.toFixed(1)} RRU over ${fanout.invocations} batches`);
    }
  }

  const bridges: BridgeCostRun[] = [];
  for (const scenario of ['none', 'cloudevents-webhook', 'otlp', 'ocsf-webhook', 'all three'] as const) {
    const run = await runBridgeCost(stack, scenario, EVENTS);
    bridges.push(run);
    log(`bridges ${scenario.padEnd(19)}: ${((run.bridges.invocations * 1000) / run.events).toFixed(1)} invocations, ${((run.bridges.readUnits * 1000) / run.events).toFixed(1)} RRU, ${((run.sinkRequests * 1000) / run.events).toFixed(1)} sink requests per 1000 events`);
  }

  log(`standing costs: idle SSE stream and WebSocket subscriber for ${IDLE_SECONDS} s`);
  const standing = await measureStanding(stack, IDLE_SECONDS);

  log(`latency: ${LATENCY_EVENTS} POSTs to a WebSocket subscriber and an SSE stream`);
  const delivery = await measureDeliveryLatency(stack, LATENCY_EVENTS, PACE_MS);
  log(`  WebSocket p50 ${delivery.websocket.p50.toFixed(0)} ms, SSE p50 ${delivery.sse.p50.toFixed(0)} ms`);
  log(`latency: ${COMMANDS} command round trips`);
  const command = await measureCommandRoundTrip(stack, COMMANDS, settings.AEP_LOCAL_POLL_MS);
  log(`  p50 ${command.p50.toFixed(0)} ms`);
  log(`fan-out at scale: ${SCALE_SIZES.join(', ')} subscribers, posts of ${SCALE_DELAYS.join(' / ')} ms`);
  const fanoutScale = await runFanoutScale(stack, { sizes: SCALE_SIZES, delaysMs: SCALE_DELAYS, eventsFor: scaleEvents, log });
  log(`paused consumer: ${PAUSED.events} notice events of ${PAUSED.eventBytes} bytes`);
  const pausedConsumer = await runPausedConsumer(stack, PAUSED);
  log(`  healthy p50 ${pausedConsumer.healthyAlone.p50.toFixed(0)} -> ${pausedConsumer.healthyBesidePaused.p50.toFixed(0)} ms, p99 ${pausedConsumer.healthyAlone.p99.toFixed(0)} -> ${pausedConsumer.healthyBesidePaused.p99.toFixed(0)} ms; closing ${pausedConsumer.paused.closingReceived}`);
  log(`history: ${HISTORY_EVENTS} events read back, ${HISTORY_SESSIONS} sessions listed`);
  const history = await measureHistory(stack, HISTORY_EVENTS, HISTORY_SESSIONS);
  if (stack.streamFailures.length > 0) throw new Error(`the fan-out mapping discarded ${stack.streamFailures.length} batches; see ${logDir}`);

  const head = git(['rev-parse', 'HEAD']);
  const dirty = git(['status', '--porcelain']) !== '';
  const cpuInfo = cpus();
  results = {
    run: {
      date: new Date().toISOString(),
      commit: head === '' ? 'unknown' : head,
      dirty,
      machine: {
        os: `${type()} ${release()} (${process.platform}/${process.arch})`,
        cpus: cpuInfo.length,
        cpuModel: cpuInfo[0]?.model.trim() ?? 'unknown',
        memoryGiB: totalmem() / 1024 ** 3,
        node: process.version,
      },
      runtimeSeconds: 0,
      settings,
    },
    costGrid,
    sweeps,
    standing,
    latency: { delivery, command },
    cpu,
    fanoutScale,
    pausedConsumer,
    bridges,
    history,
  };
} finally {
  log('stopping the stack');
  await stack.stop();
  handlerLog.end();
}

results.run.runtimeSeconds = (performance.now() - startedAt) / 1000;
const written = writeOutputs(results);
log(`done in ${results.run.runtimeSeconds.toFixed(0)} s${quick ? ' (BENCH_QUICK: not for committing)' : ''}. Results:`);
for (const path of written) process.stderr.write(`  ${path}\n`);
process.stderr.write(`  handler logs: ${join(logDir, 'handlers.log')}\n`);
// DynamoDB Local's JVM and keep-alive sockets are gone; exit without waiting on stray timers.
process.exit(0);
