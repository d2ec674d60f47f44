/**
 * `npm run bench`: cost per event, latency, and how they grow. Starts the local stack in this
 * process (DynamoDB Local, the local API Gateway, the real handlers, the stream poller), runs
 * the scenarios, and writes BENCHMARKS.md, bench/results.json and the SVG plots.
 *
 * Environment: BENCH_EVENTS (events per batch and WebSocket cost scenario, default 1000),
 * BENCH_SINGLE_EVENTS (events per single-POST scenario, default 1000), BENCH_LATENCY_EVENTS (default 500), BENCH_COMMANDS (default 200), BENCH_LATENCY_REPEATS (times the
 * latency stage runs, each figure the median, default 5), BENCH_SCALE_REPEATS (relay/stand-in pairs
 * per fan-out scale row, default 5, after one discarded warm-up pair per size: each rate and CPU ratio their geometric mean, each latency ratio their geometric mean without the highest and the lowest, this machine's figures their medians),
 * BENCH_HISTORY_EVENTS (events read back through GET /history, default 3000), BENCH_HISTORY_SESSIONS
 * (sessions listed, default 200), BENCH_QUICK=1 (a fast smoke run with fewer events and subscribers;
 * not for committing), BENCH_CPU_REPEATS (default 5), BENCH_CPU_MAX_LOAD / BENCH_CPU_WAIT_S (the
 * quiet machine the CPU stage waits for, below), BENCH_PAUSED_REPEATS (consecutive paused-consumer
 * runs, default 5), BENCH_SSE_IDLE_S / BENCH_SSE_BURST / BENCH_SSE_CPU_SLICES (the SSE stream-hour's
 * idle seconds, burst events, and CPU slices of 100 events alternated with the yardstick, default
 * 121, 300 and 30). `--only cpu|paused|history|reconnect|fanout|latency` measures that stage alone and merges it into
 * bench/results.json (`--history-only` is `--only history`); `--only sse-hour` (also `npm run
 * bench:sse-hour`) the SSE stream-hour alone, into bench/sse-stream-hour.json and .md, BENCHMARKS.md
 * regenerated with it. Run a stage alone under the shared test lock.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { startStack } from '../local/stack.ts';
import { INGEST_LABELS, runCostGroup, runSweepScenario, measureStanding, settle } from './cost.ts';
import type { CostRun, IngestPath, PhasePlan, SweepRun } from './cost.ts';
import { runCpuBenchmarkRepeated } from './cpu.ts';
import type { CpuResult, CpuTaking } from './cpu.ts';
import { runFanoutScale } from './fanout-scale.ts';
import { runPausedConsumerRepeated, stackSaturated } from './paused-consumer.ts';
import type { PausedConsumerResult } from './paused-consumer.ts';
import { runBridgeCost } from './bridges.ts';
import type { BridgeCostRun } from './bridges.ts';
import { measureHistory } from './history.ts';
import { SSE_STREAMS, measureCommandRoundTrip, measureDeliveryLatency, medianOfRepeats } from './latency.ts';
import type { DeliveryLatency, Distribution } from './latency.ts';
import { BENCH_OUTPUT_FILES, readSavedResults, repoRoot, writeBenchmarksMd, writeOutputs, writeRendered, writeStreamHour } from './outputs.ts';
import { measureSseStreamHour } from './sse-stream-hour.ts';
import type { SseStreamHour } from './sse-stream-hour-model.ts';
import { measureReconnectingConsumer } from './reconnecting-consumer.ts';
import { measureFreshSession } from './fresh-session.ts';
import { waitForQuietMachine } from './quiet-machine.ts';
import { derive } from './results-model.ts';
import { divertHandlerLogs } from './handler-log.ts';
import type { BenchResults } from './report.ts';
import { benchArguments } from './bench-arguments.ts';

const startedAt = performance.now();

const { only, reportOnly } = benchArguments();

// `--only lanes`: the fan-out lanes stage on stacks of its own (bench/lanes-stage.ts, which
// merges its figures into bench/results.json; also `npm run bench:lanes`), in a process of its own.
if (only === 'lanes') {
  const lanes = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(new URL('./lanes-stage.ts', import.meta.url))], { stdio: 'inherit' });
  process.exit(lanes.status ?? 1);
}

// `--report-only`: re-render BENCHMARKS.md and the plots from bench/results.json, measuring
// nothing and writing nothing there.
if (reportOnly) {
  for (const path of writeRendered(readSavedResults())) process.stderr.write(`  ${path}\n`);
  process.exit(0);
}
// `--only <stage>` (`cpu`, `paused`, `history`, `reconnect`, `fanout`, `latency`; `--history-only` is
// `--only history`): measure that stage alone and merge it into bench/results.json, every other
// stage's figures kept. `--only sse-hour`: the SSE stream-hour alone, into its own files.
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
const SUBSCRIBER_COUNTS = quick ? [0, 1, 10] : [0, 1, 10, 100];
const SWEEP_COUNTS = quick ? [0, 10, 100] : [0, 10, 100, 1000];
const PACE_MS = 30;
const SCALE_SIZES = (process.env.BENCH_SCALE_SIZES ?? (quick ? '100,300' : '100,1000,5000')).split(',').map(Number).filter((size) => size > 0);
const SCALE_DELAYS = [20, 50];
// Relay/stand-in pairs per fan-out scale row: each rate and CPU ratio the geometric mean of the
// pairs' own ratios and each latency ratio the same without the highest and the lowest pair, this
// machine's figures their medians (fanout-scale.ts, pairRatio, standInLatencyRatio and medianOfPairs).
// Five at every size: with three, one pair's ratio moved a row's latency ratio by 17% between two
// consecutive full runs (pair ratios 0.81-1.19 at 5,000 subscribers).
const SCALE_REPEATS = positive('BENCH_SCALE_REPEATS', quick ? 1 : 5);
const scaleRepeats = () => SCALE_REPEATS;
const SCALE_PAIRS_SETTING = "fan-out scale: relay/stand-in pairs per row (ratios their geometric mean, this machine's figures their medians)";
/** Events per scale run: enough deliveries to time (at least ~20,000), one NDJSON request. */
const scaleEvents = (subscribers: number) => Math.max(10, Math.min(200, Math.round(50_000 / subscribers)));
// The pace is kept off the stream poll's 100 ms: at 100 ms every batch of a half fell at one phase
// of the poll, set when the half began and different in the other half, and p99 beside ÷ alone
// was 0.92× in one run and 1.16× in the next; each batch at a random point of its period instead
// bunched batches and moved it more (0.43-4.49× between pairs). At 110 ms the phase moves 10 ms a
// batch and sweeps the whole poll ten times in a half.
// 20 events a batch (182 events/s, 364 KB/s): at 50 (455 events/s) the offered load was above
// what DynamoDB Local takes on this machine (about 360 conditional puts/s), the stack queued, and
// a run's healthy p50 was 0.2 s or 3 s by where the queue stood (beside ÷ alone 0.99-11.4× in one
// full run, medians 1.12× and 2.40× in two consecutive ones). 4,000 events are still 8 MB, past
// the paused consumer's buffers (about 4.5 MB), so its closing frame is still decided.
const PAUSED = { events: quick ? 1000 : 4000, batch: 20, paceMs: 110, eventBytes: 2000 };
const CPU_REPEATS = positive('BENCH_CPU_REPEATS', quick ? 3 : 5);
// The CPU stage waits for a quiet machine: the 1-minute load below BENCH_CPU_MAX_LOAD (default
// 0.5), for at most BENCH_CPU_WAIT_S (default 1800 s alone, where not reaching it is an error;
// 120 s in a full run, which then goes on with the load on record).
const CPU_MAX_LOAD = Number(process.env.BENCH_CPU_MAX_LOAD ?? 0.5);
const CPU_WAIT_S = Number(process.env.BENCH_CPU_WAIT_S ?? (only === 'cpu' ? 1800 : 120));
const LATENCY_REPEATS = positive('BENCH_LATENCY_REPEATS', quick ? 1 : 5);
const PAUSED_REPEATS = positive('BENCH_PAUSED_REPEATS', quick ? 1 : 5);
// The standing window, for an idle WebSocket subscriber (nothing polls for it). The idle SSE
// stream's standing cost is the SSE stream-hour stage's, at the deployed stream settings.
const IDLE_SECONDS = quick ? 5 : 30;
// The SSE stream-hour's idle phase: long enough for the periodic costs (the token re-check every
// 30 s, the slot renewal every 40 s) to come round several times (121 s: 4 re-checks, 3 renewals).
// Its CPU per delivery: slices of 100 events (one POST each) alternated with the yardstick on the
// "after" stream, after its burst. 30 of them: with 20 slices of 50 events (about 16 ms of CPU
// each, single slices 0.23-0.69 ms per delivery) the median ratio was 108× in one full run and
// 123× in the next, 14% apart, at the edge of what two runs may differ by.
const SSE_HOUR = { idleSeconds: positive('BENCH_SSE_IDLE_S', quick ? 45 : 121), burstEvents: positive('BENCH_SSE_BURST', quick ? 100 : 300), cpuSlices: positive('BENCH_SSE_CPU_SLICES', quick ? 6 : 30), sliceEvents: 100, cpuProcesses: positive('BENCH_SSE_CPU_PROCESSES', quick ? 1 : 5) };
const RECONNECT = { rounds: quick ? 2 : 5, events: 200 };
const FRESH = { rounds: quick ? 2 : 5, events: 200 };

const settings = {
  AEP_LOCAL_POLL_MS: 100,
  AEP_LOCAL_WS_JITTER_MS: 5,
  // The deployed inbox poll (infra/constructs/relay-functions.ts), so the SSE latency is what a
  // deployment sees (the SSE stream-hour serves its streams at every deployed stream setting).
  AEP_SSE_POLL_MS: 250,
  // A stream whose client left polls on until its idle end (Lambda is not told the client went):
  // short, so the few abandoned streams of the latency stage stop soon after it.
  AEP_SSE_IDLE_END_MS: 10_000,
  'events per cost scenario': SINGLE_EVENTS === EVENTS ? String(EVENTS) : `${SINGLE_EVENTS} (single POSTs), ${EVENTS} (NDJSON batches, WebSocket emits)`,
  'events per sweep scenario': SWEEP_EVENTS,
  'subscriber counts': SUBSCRIBER_COUNTS.join(', '),
  'unmatchable subscription counts (sweeps)': SWEEP_COUNTS.join(', '),
  'single-POST concurrency': 4,
  'WebSocket emit window (messages in flight)': 8,
  'latency events / mean pace': `${LATENCY_EVENTS} / one every ${PACE_MS} ms on average (Poisson arrivals)`,
  'commands timed (random pause between them)': `${COMMANDS} (0–100 ms)`,
  'latency stage repeats (each figure the median)': LATENCY_REPEATS,
  'idle window for standing costs (WebSocket)': `${IDLE_SECONDS} s`,
  'SSE stream-hour: idle / burst / CPU slices': `${SSE_HOUR.idleSeconds} s / ${SSE_HOUR.burstEvents} events / ${SSE_HOUR.cpuSlices} × ${SSE_HOUR.sliceEvents} events in each of ${SSE_HOUR.cpuProcesses} processes`,
  'history session events / sessions listed': `${HISTORY_EVENTS} / ${HISTORY_SESSIONS}`,
  'fan-out scale: subscribers / post round trips': `${SCALE_SIZES.join(', ')} / ${SCALE_DELAYS.join(', ')} ms`,
  [SCALE_PAIRS_SETTING]: SCALE_REPEATS,
  'paused consumer: events / batch / pace / bytes': `${PAUSED.events} / ${PAUSED.batch} / ${PAUSED.paceMs} ms / ${PAUSED.eventBytes}`,
  'paused consumer: consecutive runs': PAUSED_REPEATS,
  'CPU stage repeats': CPU_REPEATS,
};

const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

const handlerLog = divertHandlerLogs('aep-bench-');
const logDir = handlerLog.dir;

/**
 * Whether the tracked tree differs from the commit measured. Untracked files are not counted: a
 * worktree's node_modules symlink (or a scratch file) would mark every run dirty. Nor are the
 * bench's own outputs (`outputs.ts`): the SSE stream-hour writes its files mid-run, and a run
 * that found them changed would call its own clean tree dirty.
 */
const treeDirty = () => git(['status', '--porcelain', '--untracked-files=no', '--', '.', ...BENCH_OUTPUT_FILES.map((path) => `:(exclude,glob)${path}`)]) !== '';

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** The CPU stage: waits for a quiet machine, then the median of CPU_REPEATS repeats. */
async function measureCpu(mode: CpuTaking['mode']): Promise<CpuResult> {
  const quietWait = await waitForQuietMachine(CPU_MAX_LOAD, CPU_WAIT_S, log);
  if (mode === 'alone' && !quietWait.reached) throw new Error(`the 1-minute load stayed at ${quietWait.load.toFixed(2)}, above ${CPU_MAX_LOAD}, for ${CPU_WAIT_S} s; nothing written (BENCH_CPU_MAX_LOAD raises the bar)`);
  log(`handler CPU over the golden corpus (${CPU_REPEATS} repeats, 1-minute load ${quietWait.load.toFixed(2)})`);
  const cpu = runCpuBenchmarkRepeated(CPU_REPEATS, quick ? 500 : 1500, loadavg, { mode, date: new Date().toISOString(), commit: git(['rev-parse', 'HEAD']) || 'unknown', quietWait });
  log(`  ${cpu.usPerEvent.pipeline.toFixed(1)} µs per event (median of ${CPU_REPEATS}: ${cpu.repeats?.pipelineUsPerEvent.map((value) => value.toFixed(1)).join(', ')}; load before each ${cpu.repeats?.loadAverage.map((value) => value.toFixed(2)).join(', ')}, after ${cpu.repeats?.loadAfter?.toFixed(2)})`);
  return cpu;
}

/**
 * The latency stage, LATENCY_REPEATS times (WebSocket delivery, SSE delivery, then command round
 * trips, in turn, each path alone on the stack), each figure the median over the repeats
 * (medianOfRepeats).
 */
async function measureLatency(stack: Parameters<typeof measureDeliveryLatency>[0]) {
  const websocket: Distribution[] = [];
  const sse: Distribution[] = [];
  const commands: Distribution[] = [];
  for (let repeat = 1; repeat <= LATENCY_REPEATS; repeat += 1) {
    log(`latency ${repeat}/${LATENCY_REPEATS}: ${LATENCY_EVENTS} POSTs to a WebSocket subscriber, then ${LATENCY_EVENTS} to ${SSE_STREAMS} SSE streams`);
    websocket.push(await measureDeliveryLatency(stack, 'websocket', LATENCY_EVENTS, PACE_MS));
    sse.push(await measureDeliveryLatency(stack, 'sse', LATENCY_EVENTS, PACE_MS));
    log(`  WebSocket p50/p99 ${websocket.at(-1)?.p50.toFixed(0)}/${websocket.at(-1)?.p99.toFixed(0)} ms, SSE p50/p99 ${sse.at(-1)?.p50.toFixed(0)}/${sse.at(-1)?.p99.toFixed(0)} ms`);
    log(`latency ${repeat}/${LATENCY_REPEATS}: ${COMMANDS} command round trips`);
    const command = await measureCommandRoundTrip(stack, COMMANDS, settings.AEP_LOCAL_POLL_MS);
    commands.push(command);
    log(`  p50/p99 ${command.p50.toFixed(0)}/${command.p99.toFixed(0)} ms`);
  }
  const delivery: DeliveryLatency = { paceMs: PACE_MS, websocket: medianOfRepeats(websocket), sse: medianOfRepeats(sse) };
  return { delivery, command: medianOfRepeats(commands), repeats: LATENCY_REPEATS };
}

/** The reconnecting-consumer stage (session order). */
async function measureReconnect(stack: Parameters<typeof measureReconnectingConsumer>[0]) {
  log(`reconnecting consumer: ${RECONNECT.rounds} rounds of ${RECONNECT.events} pipelined events, dropping after every 5 to 40`);
  const result = await measureReconnectingConsumer(stack, RECONNECT);
  for (const [index, round] of result.rounds.entries()) log(`  round ${index + 1}: ${round.connections} connections, ${round.lateEntries} late entries, ${round.duplicates} duplicates, ${round.complete ? 'all received' : 'INCOMPLETE'}`);
  return result;
}

/** A fresh session's first delivery beside a warm one's (bench/fresh-session.ts). */
async function measureFresh(stack: Parameters<typeof measureFreshSession>[0]) {
  log(`fresh session: ${FRESH.rounds} rounds of ${FRESH.events} pipelined events to a new session by a new agent, then ${FRESH.events} more once warm`);
  const result = await measureFreshSession(stack, { ...FRESH, pollMs: settings.AEP_LOCAL_POLL_MS });
  for (const [index, round] of result.rounds.entries()) log(`  round ${index + 1}: first delivery fresh ${round.fresh.firstMs.toFixed(0)} ms, warm ${round.warm.firstMs.toFixed(0)} ms; write units per event fresh ${round.fresh.writeUnitsPerEvent.toFixed(2)}, warm ${round.warm.writeUnitsPerEvent.toFixed(2)}`);
  return result;
}

/** The fan-out scale stage, each run with its same-run yardsticks. */
async function measureFanoutScale(stack: Parameters<typeof runFanoutScale>[0]) {
  log(`fan-out at scale: ${SCALE_SIZES.join(', ')} subscribers, posts of ${SCALE_DELAYS.join(' / ')} ms, each beside a stand-in post loop`);
  return runFanoutScale(stack, { sizes: SCALE_SIZES, delaysMs: SCALE_DELAYS, eventsFor: scaleEvents, repeatsFor: scaleRepeats, log });
}

/** The SSE stream-hour stage, written to its own files (BENCHMARKS.md quotes them). */
async function measureStreamHour(stack: Parameters<typeof measureSseStreamHour>[0]): Promise<SseStreamHour> {
  const head = git(['rev-parse', 'HEAD']);
  const hour = await measureSseStreamHour(stack, { ...SSE_HOUR, ...(head === '' ? {} : { commit: head }), dirty: treeDirty(), log });
  for (const path of writeStreamHour(hour)) process.stderr.write(`  ${path}\n`);
  return hour;
}

/** The paused-consumer stage, PAUSED_REPEATS consecutive runs. */
async function measurePaused(stack: Parameters<typeof runPausedConsumerRepeated>[0], warmUps: number): Promise<PausedConsumerResult> {
  log(`paused consumer: ${PAUSED.events} notice events of ${PAUSED.eventBytes} bytes, ${warmUps} warm-up runs then ${PAUSED_REPEATS} runs`);
  const result = await runPausedConsumerRepeated(stack, PAUSED, PAUSED_REPEATS, (run, index) =>
    log(`  run ${index + 1}: ${stackSaturated(run, PAUSED.paceMs) ? 'STACK SATURATED (no ratio): ' : ''}healthy p50 ${run.healthyAlone.p50.toFixed(0)} -> ${run.healthyBesidePaused.p50.toFixed(0)} ms (${(run.healthyBesidePaused.p50 / run.healthyAlone.p50).toFixed(2)}x), p99 ${run.healthyAlone.p99.toFixed(0)} -> ${run.healthyBesidePaused.p99.toFixed(0)} ms (${(run.healthyBesidePaused.p99 / run.healthyAlone.p99).toFixed(2)}x); closing ${run.paused.closingReceived}, matches last event ${run.paused.closingMatchesLastEvent}, closed after ${run.paused.closedAfterClosing}`),
    warmUps,
  );
  return result;
}

if (only === 'cpu') {
  const saved = readSavedResults();
  saved.cpu = await measureCpu('alone');
  saved.run.settings = { ...saved.run.settings, 'CPU stage repeats': CPU_REPEATS };
  for (const path of writeOutputs(saved)) process.stderr.write(`  ${path}\n`);
  process.exit(0);
}

// 1. Handler CPU, before anything else runs on the machine.
const cpu = only === undefined ? await measureCpu('first stage') : undefined;

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
    AEP_SSE_IDLE_END_MS: String(settings.AEP_SSE_IDLE_END_MS),
    // The bench pipelines more frames on one socket than a connection's default budget passes
    // (100/s, burst 500); the budget costs no DynamoDB call, so the cost figures are the same.
    AEP_SOCKET_FRAMES_PER_SECOND: '0',
    // The fan-out scale stage measures one tenant's session at the posting rate; the bound on one
    // tenant's deliveries per batch (5,000, for shards shared with other tenants) would drop its
    // info events past 5,000 deliveries and leave the stage waiting for them. No other stage nears it.
    AEP_FANOUT_TENANT_DELIVERIES: '1000000',
  },
});
let results: BenchResults;
if (only !== undefined) {
  try {
    const saved = readSavedResults();
    if (only === 'sse-hour') {
      await measureStreamHour(stack);
    } else if (only === 'reconnect') {
      saved.reconnectingConsumer = await measureReconnect(stack);
    } else if (only === 'fresh') {
      saved.freshSession = await measureFresh(stack);
    } else if (only === 'fanout') {
      saved.fanoutScale = await measureFanoutScale(stack);
      saved.run.settings = { ...saved.run.settings, 'fan-out scale: subscribers / post round trips': settings['fan-out scale: subscribers / post round trips'], [SCALE_PAIRS_SETTING]: SCALE_REPEATS };
    } else if (only === 'latency') {
      saved.latency = await measureLatency(stack);
    } else if (only === 'history') {
      log(`history only: ${HISTORY_EVENTS} events, ${HISTORY_SESSIONS} sessions`);
      saved.history = await measureHistory(stack, HISTORY_EVENTS, HISTORY_SESSIONS);
      saved.run.settings = { ...saved.run.settings, 'history session events / sessions listed': `${HISTORY_EVENTS} / ${HISTORY_SESSIONS}` };
    } else {
      // Alone on a fresh stack: warm-up runs first (a full run's earlier stages warm it instead).
      saved.pausedConsumer = await measurePaused(stack, 3);
      saved.run.settings = {
        ...saved.run.settings,
        'paused consumer: events / batch / pace / bytes': settings['paused consumer: events / batch / pace / bytes'],
        'paused consumer: consecutive runs': PAUSED_REPEATS,
      };
    }
    if (stack.streamFailures.length > 0) throw new Error(`the fan-out mapping discarded ${stack.streamFailures.length} batches; see ${logDir}`);
    // The stream-hour lives in its own files: bench/results.json stays as it was.
    for (const path of only === 'sse-hour' ? writeBenchmarksMd(saved) : writeOutputs(saved)) process.stderr.write(`  ${path}\n`);
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
      const row = derive(run, { concurrency: stack.config.fanout.concurrency, cpuMsPerDelivery: 0 });
      log(`cost ${String(subscribers).padStart(3)} subscribers, ${INGEST_LABELS[run.ingest].padEnd(21)}: ${row.writeUnitsPerEvent.toFixed(2)} ingest WRU/event (fan-out ${row.fanoutWriteUnitsPerEvent.toFixed(2)}), ${row.readUnits.toFixed(0)} RRU/1000 (${row.emptyReads.toFixed(0)} empty reads), ${run.receivedDeliveries}/${run.expectedDeliveries} deliveries, ${(run.wallMs / 1000).toFixed(1)} s`);
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

  log(`standing costs: idle WebSocket subscriber for ${IDLE_SECONDS} s`);
  const standing = await measureStanding(stack, IDLE_SECONDS);
  await measureStreamHour(stack);

  const latency = await measureLatency(stack);
  const fanoutScale = await measureFanoutScale(stack);
  const pausedConsumer = await measurePaused(stack, 0);
  const reconnectingConsumer = await measureReconnect(stack);
  const freshSession = await measureFresh(stack);
  log(`history: ${HISTORY_EVENTS} events read back, ${HISTORY_SESSIONS} sessions listed`);
  const history = await measureHistory(stack, HISTORY_EVENTS, HISTORY_SESSIONS);
  if (stack.streamFailures.length > 0) throw new Error(`the fan-out mapping discarded ${stack.streamFailures.length} batches; see ${logDir}`);

  const head = git(['rev-parse', 'HEAD']);
  const dirty = treeDirty();
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
    latency,
    cpu: cpu as CpuResult,
    fanoutScale,
    pausedConsumer,
    bridges,
    history,
    reconnectingConsumer,
    freshSession,
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
process.stderr.write(`  handler logs: ${handlerLog.path}\n`);
// DynamoDB Local's JVM and keep-alive sockets are gone; exit without waiting on stray timers.
process.exit(0);
