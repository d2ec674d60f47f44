/**
 * The SSE stream-hour stage (`npm run bench --only sse-hour`, `npm run bench:sse-hour`, and a
 * stage of the full `npm run bench`): what an SSE stream costs held open for an hour, every
 * periodic cost in it, before and after the idle backoff and the probe reads, beside an idle
 * WebSocket; and the stream function's memory measured rather than assumed.
 *
 * On a running local stack, one stream per variant is served by the stream handler alone in a
 * process of its own (bench/sse-stream-process.ts, bundled with esbuild as the deployed function
 * is, run with plain node), like one Lambda execution environment, at the deployed stream
 * settings (`DEPLOYED_STREAM`: poll 250 ms backing off to 2 s after 8 empty reads, heartbeat
 * 15 s, token re-check 30 s, slot lease 120 s renewed every 40 s, the stream pool of 180 with a
 * tenant's share, idle end 5 min, flush padding 16 KB), whatever the stack's own settings: opened,
 * left idle for `idleSeconds` (121 s by default: 4 re-checks and 3 renewals), sent a burst of
 * `burstEvents` events (1 KB each), then left by its client. Every DynamoDB call is priced at the
 * units DynamoDB bills for it (never below the least a call is billed: 0.5 RRU eventually
 * consistent, 1 RRU strongly, 1 WRU per item). The hour is `hourOf` (sse-stream-hour-model.ts).
 * "Before" runs the previous code path (every read strongly consistent, no backoff) at the
 * previous 512 MB; "after" the current one at the size the stack sets.
 *
 * The CPU per delivery is taken on the "after" stream once the burst is over (and with it the
 * RSS samples): `cpuSlices` slices of `sliceEvents` events, each posted when the process asks for
 * it, in alternation with slices of the reference pipeline in the same process; the ratio is the
 * median slice ÷ the median reference slice (`cpuAgainstReference`), so a burst of other work on
 * the shared cores spoils a slice, not the figure. One burst timed once, against a yardstick
 * timed after it, read 68.8× and 85.7× in two runs. The phase runs in `cpuProcesses` stream
 * processes (the "after" stream, then more with a short idle) and the figure is the mean of
 * their ratios (`cpuAgainstReferenceOver`): a process keeps one compiled form for its life.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { LAMBDA_BUILD } from '../infra/bundle.ts';
import { STREAM_MEMORY_MB } from '../infra/constructs/stream-memory.ts';
import type { RunningStack } from '../local/stack.ts';
import { uniqueName } from './clients.ts';
import { settle } from './cost.ts';
import { benchEvents } from './workload.ts';
import { cpuAgainstReference, DEPLOYED_STREAM_ENV, streamHourOf } from './sse-stream-hour-model.ts';
import type { SseStreamHour, StreamProcessReport } from './sse-stream-hour-model.ts';

const here = dirname(fileURLToPath(import.meta.url));

export interface SseStreamHourOptions {
  idleSeconds: number;
  burstEvents: number;
  /** The CPU phase of the "after" stream: slices, and events in each (one NDJSON POST). */
  cpuSlices: number;
  sliceEvents: number;
  /** Stream processes that run the CPU phase: the "after" stream and this many less one more, each with a short idle (the figure is the mean of their ratios). */
  cpuProcesses: number;
  /** The commit measured, recorded with the figures. */
  commit?: string;
  dirty?: boolean;
  log: (message: string) => void;
}

/** The stream process, bundled as the deployed function is. */
async function bundleStreamProcess(): Promise<string> {
  const bundle = join(mkdtempSync(join(tmpdir(), 'aep-sse-hour-')), 'index.mjs');
  await build({
    entryPoints: [join(here, 'sse-stream-process.ts')],
    outfile: bundle,
    ...LAMBDA_BUILD,
  });
  return bundle;
}

/**
 * One stream of `variant` served in its own process: the burst is posted when it says it is idle
 * no more, and each slice of the CPU phase ("after" only) when it asks for it.
 */
async function serveOne(stack: RunningStack, bundle: string, variant: 'before' | 'after', options: SseStreamHourOptions): Promise<StreamProcessReport> {
  const session = uniqueName('sse-hour');
  const cpuSlices = variant === 'after' ? options.cpuSlices : 0;
  const events = benchEvents(session, options.burstEvents + cpuSlices * options.sliceEvents);
  const burst = events.slice(0, options.burstEvents);
  const sliceOf = (index: number) => events.slice(options.burstEvents + index * options.sliceEvents, options.burstEvents + (index + 1) * options.sliceEvents);
  // The burst's texts, for the CPU yardstick the process times over the same events.
  const referenceFile = join(dirname(bundle), `${variant}-events.ndjson`);
  writeFileSync(referenceFile, burst.map((event) => JSON.stringify(event)).join('\n'));
  const child = spawn(process.execPath, [bundle], {
    // The stack set the tables and the DynamoDB endpoint in this process's environment; the
    // stream settings are the deployed ones, whatever the stack's.
    env: {
      ...process.env,
      ...DEPLOYED_STREAM_ENV,
      BENCH_VARIANT: variant,
      BENCH_TOKEN: stack.devToken,
      BENCH_SESSION: session,
      BENCH_IDLE_MS: String(options.idleSeconds * 1000),
      BENCH_BURST_EVENTS: String(options.burstEvents),
      BENCH_CPU_SLICES: String(cpuSlices),
      BENCH_SLICE_EVENTS: String(options.sliceEvents),
      BENCH_REFERENCE_FILE: referenceFile,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let pending = '';
  const done = new Promise<StreamProcessReport>((resolvePromise, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (line === 'BENCH_IDLE_DONE') postBurst(stack, burst).catch(reject);
        else if (line.startsWith('BENCH_SLICE ')) {
          // The slice's events, then the word once fan-out has put them all in the stream's inbox.
          const index = Number(line.slice('BENCH_SLICE '.length));
          postBatch(stack, sliceOf(index))
            .then(() => settle(stack))
            .then(() => child.stdin.write(`BENCH_GO ${index}\n`))
            .catch(reject);
        } else if (line.startsWith('BENCH_REPORT ')) resolvePromise(JSON.parse(line.slice('BENCH_REPORT '.length)) as StreamProcessReport);
      }
    });
    child.on('exit', (code) => setTimeout(() => reject(new Error(`stream process (${variant}) exited ${code} without a report`)), 100));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), (options.idleSeconds + 240) * 1000);
  try {
    const report = await done;
    if (report.delivered !== options.burstEvents) throw new Error(`the ${variant} stream delivered ${report.delivered} of ${options.burstEvents} events`);
    const sliced = report.cpuSlices ?? [];
    if (sliced.length !== cpuSlices || sliced.some((slice) => slice.deliveries !== options.sliceEvents)) throw new Error(`the ${variant} stream's CPU phase took ${sliced.length} of ${cpuSlices} slices of ${options.sliceEvents} deliveries`);
    return report;
  } finally {
    clearTimeout(timeout);
  }
}

/** The burst: the stream's session's events, in NDJSON batches of 50, one every 100 ms. */
async function postBurst(stack: RunningStack, events: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  for (let start = 0; start < events.length; start += 50) {
    await postBatch(stack, events.slice(start, start + 50));
    await new Promise((resolveSleep) => setTimeout(resolveSleep, 100));
  }
}

/** One NDJSON POST of `events`. */
async function postBatch(stack: RunningStack, events: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  if (events.length === 0) throw new Error('a CPU slice with no events was asked for');
  const body = events.map((event) => JSON.stringify(event)).join('\n') + '\n';
  const response = await fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${stack.devToken}`, 'content-type': 'application/x-ndjson', 'aep-version': '0.1' }, body });
  if (response.status !== 202) throw new Error(`burst refused: ${response.status} ${await response.text()}`);
}

export async function measureSseStreamHour(stack: RunningStack, options: SseStreamHourOptions): Promise<SseStreamHour> {
  const { log } = options;
  const bundle = await bundleStreamProcess();
  log(`SSE stream-hour: one stream per variant in a process of its own, ${options.idleSeconds} s idle, then ${options.burstEvents} events; then, on "after", ${options.cpuSlices} CPU slices of ${options.sliceEvents} events between slices of the reference pipeline`);
  const before = await serveOne(stack, bundle, 'before', options);
  log(`  before: ${before.delivered} delivered, peak RSS ${before.rss.peakMb.toFixed(1)} MB`);
  const after = await serveOne(stack, bundle, 'after', options);
  const cpuOf = (report: StreamProcessReport) => {
    const cpu = cpuAgainstReference(report);
    return cpu === undefined ? 'not taken' : `${cpu.msPerDelivery.toFixed(3)} ms, ${cpu.ratio.toFixed(1)}x the reference's ${(cpu.referenceMsPerEvent * 1000).toFixed(2)} µs (median slices; pairs ${Math.min(...cpu.pairRatios).toFixed(1)}-${Math.max(...cpu.pairRatios).toFixed(1)}x)`;
  };
  log(`  after: ${after.delivered} delivered, peak RSS ${after.rss.peakMb.toFixed(1)} MB; CPU per delivery ${cpuOf(after)}`);
  // More processes for the CPU phase alone (a short idle, the same burst to warm the path).
  const moreCpu: StreamProcessReport[] = [];
  for (let index = 1; index < options.cpuProcesses; index += 1) {
    const report = await serveOne(stack, bundle, 'after', { ...options, idleSeconds: 2 });
    moreCpu.push(report);
    log(`  CPU process ${index + 1}/${options.cpuProcesses}: CPU per delivery ${cpuOf(report)}`);
  }
  const hour = streamHourOf(before, after, STREAM_MEMORY_MB, {
    measuredAt: new Date().toISOString(),
    ...(options.commit === undefined ? {} : { commit: options.commit }),
    ...(options.dirty === undefined ? {} : { dirty: options.dirty }),
    idleSeconds: options.idleSeconds,
    burstEvents: options.burstEvents,
    cpuSlices: options.cpuSlices,
    sliceEvents: options.sliceEvents,
  }, moreCpu);
  if (hour.memory.cpuProcessRatios !== undefined) log(`  CPU per delivery ÷ the reference: ${hour.memory.cpuRatioToReference?.toFixed(1)}x, the mean of ${hour.memory.cpuProcessRatios.map((ratio) => ratio.toFixed(1)).join(', ')}`);
  if (hour.memory.sizedMb !== STREAM_MEMORY_MB) log(`  the measured peak sizes the stream function at ${hour.memory.sizedMb} MB; infra/constructs/stream-memory.ts says ${STREAM_MEMORY_MB} MB: update it`);
  log(`  hour: before $${hour.hour.before.usd.total.toFixed(4)} (${Math.round(hour.hour.before.readUnits)} RRU), after $${hour.hour.after.usd.total.toFixed(4)} (${Math.round(hour.hour.after.readUnits)} RRU)`);
  return hour;
}
