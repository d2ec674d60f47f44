/** The SSE stream-hour stage: one stream served alone in a bundled process at `DEPLOYED_STREAM`, idle `idleSeconds`, then a burst; memory measured, the hour priced. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { LAMBDA_BUILD } from '../../infra/bundle.ts';
import { STREAM_MEMORY_MB } from '../../infra/constructs/stream-memory.ts';
import type { RunningStack } from '../../local/stack.ts';
import { postBatches, sleep, uniqueName } from '../clients.ts';
import { benchEvents } from '../workload.ts';
import { DEPLOYED_STREAM_ENV, streamHourOf } from './sse-hour-model.ts';
import type { SseStreamHour, StreamProcessReport } from './sse-hour-model.ts';

const here = dirname(fileURLToPath(import.meta.url));

type SseStreamHourOptions = { idleSeconds: number; burstEvents: number; log: (message: string) => void };

/** The stream process, bundled as the deployed function is. */
async function bundleStreamProcess(): Promise<string> {
  const bundle = join(mkdtempSync(join(tmpdir(), 'aep-sse-hour-')), 'index.mjs');
  await build({ entryPoints: [join(here, 'sse-stream-process.ts')], outfile: bundle, ...LAMBDA_BUILD });
  return bundle;
}

/** One stream served in its own process; the burst is posted when it is idle no more. */
async function serveOne(stack: RunningStack, bundle: string, options: SseStreamHourOptions): Promise<StreamProcessReport> {
  const session = uniqueName('sse-hour');
  const burst = benchEvents(session, options.burstEvents);
  const child = spawn(process.execPath, [bundle], {
    env: { ...process.env, ...DEPLOYED_STREAM_ENV, BENCH_TOKEN: stack.devToken, BENCH_SESSION: session, BENCH_IDLE_MS: String(options.idleSeconds * 1000), BENCH_BURST_EVENTS: String(options.burstEvents) },
    stdio: ['ignore', 'pipe', 'inherit'],
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
        else if (line.startsWith('BENCH_REPORT ')) resolvePromise(JSON.parse(line.slice('BENCH_REPORT '.length)) as StreamProcessReport);
      }
    });
    child.on('exit', (code) => setTimeout(() => reject(new Error(`stream process exited ${code} without a report`)), 100));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), (options.idleSeconds + 240) * 1000);
  try {
    const report = await done;
    if (report.delivered !== options.burstEvents) throw new Error(`the stream delivered ${report.delivered} of ${options.burstEvents} events`);
    return report;
  } finally {
    clearTimeout(timeout);
  }
}

/** The burst: the stream's session's events, in NDJSON batches of 50, one every 100 ms. */
async function postBurst(stack: RunningStack, events: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  for (let start = 0; start < events.length; start += 50) {
    await postBatches(stack.baseUrl, stack.devToken, events.slice(start, start + 50));
    await sleep(100);
  }
}

export async function measureSseStreamHour(stack: RunningStack, options: SseStreamHourOptions): Promise<SseStreamHour> {
  const report = await serveOne(stack, await bundleStreamProcess(), options);
  const hour = streamHourOf(report, STREAM_MEMORY_MB, { idleSeconds: options.idleSeconds, burstEvents: options.burstEvents });
  if (hour.sizedMb !== STREAM_MEMORY_MB) options.log(`  the measured peak sizes the stream function at ${hour.sizedMb} MB; infra/constructs/stream-memory.ts says ${STREAM_MEMORY_MB} MB: update it`);
  options.log(`  peak RSS ${hour.peakRssMb.toFixed(1)} MB; CPU per delivery ${hour.cpuRatioToReference?.toFixed(1)}x the reference; hour $${hour.hour.usd.total.toFixed(4)}`);
  return hour;
}
