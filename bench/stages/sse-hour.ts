/**
 * The SSE stream-hour stage: what an SSE stream costs held open for an hour, every periodic cost
 * in it, beside an idle WebSocket; and the stream function's memory measured, not assumed. One
 * stream is served by the stream handler alone in a process of its own (sse-stream-process.ts,
 * bundled as the deployed function is) at the deployed stream settings (`DEPLOYED_STREAM`):
 * opened, left idle `idleSeconds` (121 s: 4 token re-checks, 3 slot renewals), sent a burst of
 * `burstEvents`, then `cpuSlices` slices of `sliceEvents` deliveries alternated with the reference
 * pipeline (the CPU yardstick), then left by its client. The hour is `hourOf`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { LAMBDA_BUILD } from '../../infra/bundle.ts';
import { STREAM_MEMORY_MB } from '../../infra/constructs/stream-memory.ts';
import type { RunningStack } from '../../local/stack.ts';
import { settle, uniqueName } from '../clients.ts';
import { benchEvents } from '../workload.ts';
import { DEPLOYED_STREAM_ENV, streamHourOf } from './sse-hour-model.ts';
import type { SseStreamHour, StreamProcessReport } from './sse-hour-model.ts';

const here = dirname(fileURLToPath(import.meta.url));

export interface SseStreamHourOptions {
  idleSeconds: number;
  burstEvents: number;
  cpuSlices: number;
  sliceEvents: number;
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

/** One stream served in its own process: the burst is posted when it is idle no more, each CPU slice when it asks. */
async function serveOne(stack: RunningStack, bundle: string, options: SseStreamHourOptions): Promise<StreamProcessReport> {
  const session = uniqueName('sse-hour');
  const { cpuSlices } = options;
  const events = benchEvents(session, options.burstEvents + cpuSlices * options.sliceEvents);
  const burst = events.slice(0, options.burstEvents);
  const sliceOf = (index: number) => events.slice(options.burstEvents + index * options.sliceEvents, options.burstEvents + (index + 1) * options.sliceEvents);
  const referenceFile = join(dirname(bundle), 'events.ndjson');
  writeFileSync(referenceFile, burst.map((event) => JSON.stringify(event)).join('\n'));
  const child = spawn(process.execPath, [bundle], {
    env: {
      ...process.env,
      ...DEPLOYED_STREAM_ENV,
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
          const index = Number(line.slice('BENCH_SLICE '.length));
          postBatch(stack, sliceOf(index))
            .then(() => settle(stack))
            .then(() => child.stdin.write(`BENCH_GO ${index}\n`))
            .catch(reject);
        } else if (line.startsWith('BENCH_REPORT ')) resolvePromise(JSON.parse(line.slice('BENCH_REPORT '.length)) as StreamProcessReport);
      }
    });
    child.on('exit', (code) => setTimeout(() => reject(new Error(`stream process  exited ${code} without a report`)), 100));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), (options.idleSeconds + 240) * 1000);
  try {
    const report = await done;
    if (report.delivered !== options.burstEvents) throw new Error(`the stream delivered ${report.delivered} of ${options.burstEvents} events`);
    const sliced = report.cpuSlices ?? [];
    if (sliced.length !== cpuSlices || sliced.some((slice) => slice.deliveries !== options.sliceEvents)) throw new Error(`the stream's CPU phase took ${sliced.length} of ${cpuSlices} slices of ${options.sliceEvents} deliveries`);
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
  const report = await serveOne(stack, await bundleStreamProcess(), options);
  const hour = streamHourOf(report, STREAM_MEMORY_MB, { idleSeconds: options.idleSeconds, burstEvents: options.burstEvents, cpuSlices: options.cpuSlices, sliceEvents: options.sliceEvents });
  if (hour.sizedMb !== STREAM_MEMORY_MB) options.log(`  the measured peak sizes the stream function at ${hour.sizedMb} MB; infra/constructs/stream-memory.ts says ${STREAM_MEMORY_MB} MB: update it`);
  options.log(`  peak RSS ${hour.peakRssMb.toFixed(1)} MB; CPU per delivery ${hour.cpuRatioToReference?.toFixed(1)}x the reference; hour $${hour.hour.usd.total.toFixed(4)}`);
  return hour;
}
