/**
 * `npm run bench:sse-hour`: what an SSE stream costs held open for an hour, every periodic cost
 * in it, before and after the idle backoff and the probe reads, beside an idle WebSocket; and the
 * stream function's memory measured rather than assumed.
 *
 * On the local stack with the deployed stream settings (poll 250 ms, heartbeat 15 s, token
 * revalidation 30 s, slot lease 120 s renewed every 40 s, idle end 5 min), one stream per variant
 * is served by the stream handler alone in a process of its own (bench/sse-stream-process.ts,
 * bundled with esbuild as the deployed function is, run with plain node), like one Lambda
 * execution environment: opened, left idle for BENCH_SSE_IDLE_S (default 121 s: 4 revalidations
 * and 3 renewals), then sent a burst of BENCH_SSE_BURST events (default 300, 1 KB each), then left
 * by its client. Every DynamoDB call is priced at the units DynamoDB bills for it (never below the
 * least a call is billed: 0.5 RRU eventually consistent, 1 RRU strongly, 1 WRU per item).
 *
 * The hour: the idle phase's units scaled to 3,600 s, plus the setup and cleanup of each stream
 * the hour holds (an idle stream ends at its idle end, 5 min, and the client reconnects: 12 a
 * hour, each a Lambda request), plus Lambda duration for the whole hour at the memory size.
 * "Before" runs the previous code path (every read strongly consistent, no backoff) at the
 * previous 512 MB; "after" the current one at the size set from the measured peak RSS.
 * Writes bench/sse-stream-hour.json and prints Markdown tables.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ESM_REQUIRE_BANNER } from '../infra/bundle.ts';
import { STREAM_MEMORY_MB } from '../infra/constructs/stream-memory.ts';
import { startStack } from '../local/stack.ts';
import { uniqueName } from './clients.ts';
import { benchEvents } from './workload.ts';
import { PRICES } from './prices.ts';
import type { CallRecord, StreamProcessReport } from './sse-stream-process.ts';

const here = dirname(fileURLToPath(import.meta.url));
const IDLE_S = Number(process.env.BENCH_SSE_IDLE_S ?? 121);
const BURST = Number(process.env.BENCH_SSE_BURST ?? 300);
/** What the stream function was deployed with before this measurement. */
const BEFORE_MEMORY_MB = 512;
/** The deployed stream settings (infra/constructs/relay-functions.ts and the relay's defaults). */
const DEPLOYED = { pollMs: 250, heartbeatMs: 15_000, revalidateMs: 30_000, slotLeaseMs: 120_000, idleEndMs: 300_000, maxDurationMs: 840_000 };
const HOUR_S = 3600;
/** An idle stream ends at its idle end and is reopened by its client. */
const STREAMS_PER_HOUR = HOUR_S / (Math.min(DEPLOYED.idleEndMs, DEPLOYED.maxDurationMs) / 1000);

const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.startsWith('{')) return true;
  return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;
const log = (message: string) => process.stderr.write(`[sse-hour] ${message}\n`);

const bundleDir = mkdtempSync(join(tmpdir(), 'aep-sse-hour-'));
const bundle = join(bundleDir, 'index.mjs');
await build({
  entryPoints: [join(here, 'sse-stream-process.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  legalComments: 'none',
  logLevel: 'warning',
  tsconfig: join(here, '..', 'tsconfig.json'),
});

const stack = await startStack({
  port: 0,
  inMemory: true,
  dataDir: mkdtempSync(join(tmpdir(), 'aep-sse-hour-data-')),
  env: {
    AEP_SSE_POLL_MS: String(DEPLOYED.pollMs),
    AEP_SSE_HEARTBEAT_MS: String(DEPLOYED.heartbeatMs),
    AEP_SSE_REVALIDATE_MS: String(DEPLOYED.revalidateMs),
    AEP_SSE_SLOT_LEASE_MS: String(DEPLOYED.slotLeaseMs),
    AEP_SSE_IDLE_END_MS: String(DEPLOYED.idleEndMs),
    AEP_SSE_MAX_DURATION_MS: String(DEPLOYED.maxDurationMs),
  },
});

async function serveOne(variant: 'before' | 'after'): Promise<StreamProcessReport> {
  const session = uniqueName('sse-hour');
  const child = spawn(process.execPath, [bundle], {
    env: { ...process.env, BENCH_VARIANT: variant, BENCH_TOKEN: stack.devToken, BENCH_SESSION: session, BENCH_IDLE_MS: String(IDLE_S * 1000), BENCH_BURST_EVENTS: String(BURST) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  let posted: Promise<void> | undefined;
  const done = new Promise<StreamProcessReport>((resolvePromise, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (posted === undefined && output.includes('BENCH_IDLE_DONE')) posted = postBurst(session).catch(reject);
      const report = /BENCH_REPORT (.*)\n/.exec(output)?.[1];
      if (report !== undefined) resolvePromise(JSON.parse(report) as StreamProcessReport);
    });
    child.on('exit', (code) => setTimeout(() => reject(new Error(`stream process (${variant}) exited ${code} without a report`)), 100));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), (IDLE_S + 240) * 1000);
  try {
    return await done;
  } finally {
    clearTimeout(timeout);
  }
}

/** The burst: BURST events of the stream's session, in NDJSON batches of 50, one every 100 ms. */
async function postBurst(session: string): Promise<void> {
  const events = benchEvents(session, BURST);
  for (let start = 0; start < events.length; start += 50) {
    const body = events.slice(start, start + 50).map((event) => JSON.stringify(event)).join('\n') + '\n';
    const response = await fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${stack.devToken}`, 'content-type': 'application/x-ndjson', 'aep-version': '0.1' }, body });
    if (response.status !== 202) throw new Error(`burst refused: ${response.status} ${await response.text()}`);
    await new Promise((resolveSleep) => setTimeout(resolveSleep, 100));
  }
}

/**
 * The memory size for a measured peak RSS: half again as much (a Lambda environment adds the
 * runtime client, and a bigger replay or burst than the bench's needs room), rounded up to a
 * multiple of 64 MB, at least Lambda's 128 MB.
 */
function sizeFromPeak(peakMb: number): number {
  return Math.max(128, Math.ceil((peakMb * 1.5) / 64) * 64);
}

const sum = (calls: readonly CallRecord[], kind: 'read' | 'write') => calls.filter((call) => call.kind === kind).reduce((total, call) => total + call.billedUnits, 0);

function hourOf(report: StreamProcessReport, memoryMb: number) {
  const idle = report.calls.filter((call) => call.phase === 'idle');
  const once = report.calls.filter((call) => call.phase === 'setup' || call.phase === 'cleanup');
  const idleSeconds = report.phaseMs.idle / 1000;
  const perHour = (units: number) => (units / idleSeconds) * HOUR_S;
  const byCommand = Object.entries(
    idle.reduce<Record<string, { calls: number; units: number }>>((groups, call) => {
      const key = `${call.command.replace('Command', '')}${call.kind === 'read' ? (call.consistent ? ' (strong)' : ' (eventual)') : ''}`;
      const group = (groups[key] ??= { calls: 0, units: 0 });
      group.calls += 1;
      group.units += call.billedUnits;
      return groups;
    }, {}),
  ).map(([call, { calls, units }]) => ({ call, callsPerHour: perHour(calls), unitsPerHour: perHour(units) }));
  const readUnits = perHour(sum(idle, 'read')) + STREAMS_PER_HOUR * sum(once, 'read');
  const writeUnits = perHour(sum(idle, 'write')) + STREAMS_PER_HOUR * sum(once, 'write');
  const lambdaGbSeconds = HOUR_S * (memoryMb / 1024);
  const usd = {
    lambdaDuration: lambdaGbSeconds * PRICES.lambdaArmGbSecond.usd,
    lambdaRequests: (STREAMS_PER_HOUR * PRICES.lambdaRequest.usd) / 1e6,
    dynamoReads: (readUnits * PRICES.dynamoRead.usd) / 1e6,
    dynamoWrites: (writeUnits * PRICES.dynamoWrite.usd) / 1e6,
  };
  return { memoryMb, readUnits, writeUnits, idleCallsPerHour: perHour(idle.length), byCommand, setupAndCleanup: { readUnits: sum(once, 'read'), writeUnits: sum(once, 'write') }, usd: { ...usd, total: usd.lambdaDuration + usd.lambdaRequests + usd.dynamoReads + usd.dynamoWrites } };
}

try {
  log(`serving one stream per variant: ${IDLE_S} s idle, then ${BURST} events`);
  const before = await serveOne('before');
  log(`before: ${before.delivered} delivered, peak RSS ${before.rss.peakMb.toFixed(1)} MB`);
  const after = await serveOne('after');
  log(`after: ${after.delivered} delivered, peak RSS ${after.rss.peakMb.toFixed(1)} MB`);
  const peakRssMb = Math.max(before.rss.peakMb, after.rss.peakMb);
  const sizedMb = sizeFromPeak(peakRssMb);
  if (sizedMb !== STREAM_MEMORY_MB) log(`the measured peak sizes the stream function at ${sizedMb} MB; infra/constructs/stream-memory.ts says ${STREAM_MEMORY_MB} MB: update it`);
  const rows = { before: hourOf(before, BEFORE_MEMORY_MB), after: hourOf(after, sizedMb) };
  const websocketHourUsd = (60 * PRICES.websocketConnectionMinute.usd) / 1e6;
  // CPU scales with memory in Lambda (1,769 MB is one vCPU): what the set size's share sustains.
  const cpuMsPerDelivery = after.burstCpuMs / Math.max(1, after.delivered);
  const deliveriesPerSecondAtSize = ((sizedMb / 1769) * 1000) / cpuMsPerDelivery;
  const results = {
    measuredAt: new Date().toISOString(),
    settings: { ...DEPLOYED, idleSeconds: IDLE_S, burstEvents: BURST, streamsPerHour: STREAMS_PER_HOUR },
    memory: { peakRssMb, before: before.rss, after: after.rss, sizedMb, setMb: STREAM_MEMORY_MB, cpuMsPerDelivery, deliveriesPerSecondAtSize },
    delivered: { before: before.delivered, after: after.delivered },
    heartbeats: { before: before.heartbeats, after: after.heartbeats },
    hour: rows,
    websocketIdleHourUsd: websocketHourUsd,
  };
  writeFileSync(join(here, 'sse-stream-hour.json'), `${JSON.stringify(results, null, 2)}\n`);
  let markdown = `# SSE stream-hour\n\nWritten by \`npm run bench:sse-hour\` (bench/sse-stream-hour.ts) at ${results.measuredAt}; the figures are in bench/sse-stream-hour.json.\n\n`;
  const writeStdoutAndFile = (text: string) => {
    markdown += text;
    return writeStdout(text);
  };
  const usd = (value: number) => `$${value.toFixed(value < 0.001 ? 6 : 4)}`;
  writeStdoutAndFile(`Stream function peak RSS over a stream's life (idle ${IDLE_S} s, then ${BURST} deliveries): before ${before.rss.peakMb.toFixed(1)} MB, after ${after.rss.peakMb.toFixed(1)} MB (${after.rss.beforeStreamMb.toFixed(1)} MB loaded, before the stream); sized at ${sizedMb} MB (the peak and half again, in 64 MB steps; the stack sets ${STREAM_MEMORY_MB} MB). Burst CPU ${cpuMsPerDelivery.toFixed(2)} ms per delivery: at ${sizedMb} MB (${(sizedMb / 1769).toFixed(2)} vCPU) about ${Math.round(deliveriesPerSecondAtSize)} deliveries/s per stream.\n\n`);
  writeStdoutAndFile('| one stream held open an hour | memory | read units | write units | Lambda duration | Lambda requests | DynamoDB reads | DynamoDB writes | total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const [label, row] of Object.entries(rows)) {
    writeStdoutAndFile(`| SSE, ${label} | ${row.memoryMb} MB | ${Math.round(row.readUnits)} | ${Math.round(row.writeUnits)} | ${usd(row.usd.lambdaDuration)} | ${usd(row.usd.lambdaRequests)} | ${usd(row.usd.dynamoReads)} | ${usd(row.usd.dynamoWrites)} | **${usd(row.usd.total)}** |\n`);
  }
  writeStdoutAndFile(`| WebSocket, idle | | 0 | 0 | | | | | **${usd(websocketHourUsd)}** (connection minutes) |\n\n`);
  writeStdoutAndFile('| idle-phase call, per hour | before: calls | before: units | after: calls | after: units |\n| --- | ---: | ---: | ---: | ---: |\n');
  const calls = [...new Set([...rows.before.byCommand, ...rows.after.byCommand].map((entry) => entry.call))].sort();
  for (const call of calls) {
    const b = rows.before.byCommand.find((entry) => entry.call === call);
    const a = rows.after.byCommand.find((entry) => entry.call === call);
    writeStdoutAndFile(`| ${call} | ${Math.round(b?.callsPerHour ?? 0)} | ${Math.round(b?.unitsPerHour ?? 0)} | ${Math.round(a?.callsPerHour ?? 0)} | ${Math.round(a?.unitsPerHour ?? 0)} |\n`);
  }
  writeStdoutAndFile(`\nSetup and cleanup per stream (${STREAMS_PER_HOUR} a hour): before ${rows.before.setupAndCleanup.readUnits} RRU, ${rows.before.setupAndCleanup.writeUnits} WRU; after ${rows.after.setupAndCleanup.readUnits} RRU, ${rows.after.setupAndCleanup.writeUnits} WRU. Heartbeats seen in the idle phase: before ${before.heartbeats}, after ${after.heartbeats}.\n`);
  writeFileSync(join(here, 'sse-stream-hour.md'), markdown);
} finally {
  await stack.stop();
}
