/**
 * `npm run bench:abandoned`: what one abandoned SSE stream (a closed tab) costs. Lambda does not
 * tell a streaming function that its client left, so the stream runs until it ends by itself:
 * before the idle end, at its duration limit (14 minutes); now after `AEP_SSE_IDLE_END_MS`
 * (5 minutes) with nothing to deliver.
 *
 * Measured on the local stack at the deployed stream settings (`DEPLOYED_STREAM`, the same the
 * SSE stream-hour uses: the poll backing off from 250 ms to 2 s, probe reads, the token re-check
 * every 30 s, the slot renewals every 40 s, the stream pool), with the idle end shortened to
 * BENCH_IDLE_END_MS (default 130 s, so the periodic costs come round a few times): one stream is
 * opened and its client leaves at once; the handler runs on, unaware, until its idle end. Its
 * life is taken in three parts: the start (setup, and the backoff reaching its longest wait,
 * within BACKOFF_SETTLED_MS), the steady idle loop, measured per minute, and the end (the last
 * seconds and the cleanup). An abandoned stream of L minutes costs its start and end once and the
 * steady loop for the rest. Read and write units as billed (reads that found nothing at their
 * minimum, `bench/billed-units.ts`), Lambda duration at the stream function's memory size,
 * priced with bench/prices.ts. Writes bench/abandoned-stream.json and prints a Markdown table.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../local/stack.ts';
import type { FunctionUsage } from '../local/usage.ts';
import { billedReadUnits, billedWriteUnits } from './billed-units.ts';
import { MEMORY_MB, PRICES } from './prices.ts';
import { DEPLOYED_STREAM, DEPLOYED_STREAM_ENV } from './sse-stream-hour-model.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';

scriptArguments({
  command: 'npm run bench:abandoned --',
  usage: `Usage: npm run bench:abandoned

What one abandoned SSE stream (a closed tab) costs until its idle end, measured on the local stack
at the deployed stream settings; writes bench/abandoned-stream.json and prints a Markdown table.
It takes no arguments; BENCH_IDLE_END_MS (default 130000) shortens the idle end.`,
  config: { options: {} },
});

const IDLE_END_MS = Number(process.env.BENCH_IDLE_END_MS ?? 130_000);
/** By then the poll has backed off to its longest wait: 8 reads at 250 ms, then 500 ms, 1 s, 2 s (5.5 s), with room. */
const BACKOFF_SETTLED_MS = 10_000;
/** The steady loop is measured until this long before the idle end, so the end is counted apart. */
const END_MARGIN_MS = 3_500;
const LIFETIMES = [
  { label: 'before: until the duration limit', minutes: DEPLOYED_STREAM.maxDurationMs / 60_000 },
  { label: 'now: until the idle end (default)', minutes: DEPLOYED_STREAM.idleEndMs / 60_000 },
];

// Handler log lines go to stdout; keep the table readable.
const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.startsWith('{')) return true;
  return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
const units = (usage: FunctionUsage) => ({ readUnits: billedReadUnits(usage), writeUnits: billedWriteUnits(usage), calls: usage.dynamoCalls });
const minus = (a: ReturnType<typeof units>, b: ReturnType<typeof units>) => ({ readUnits: a.readUnits - b.readUnits, writeUnits: a.writeUnits - b.writeUnits, calls: a.calls - b.calls });

const stack = await startStack({
  port: 0,
  inMemory: true,
  dataDir: mkdtempSync(join(tmpdir(), 'aep-abandoned-')),
  env: { ...DEPLOYED_STREAM_ENV, AEP_SSE_IDLE_END_MS: String(IDLE_END_MS), AEP_SSE_MAX_DURATION_MS: String(IDLE_END_MS + 60_000) },
});
try {
  stack.resetUsage();
  const controller = new AbortController();
  const openedAt = performance.now();
  const response = await fetch(`${stack.baseUrl}/stream`, { headers: { authorization: `Bearer ${stack.devToken}` }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`stream refused: ${response.status}`);
  // The tab closes: the client is gone, the function is not told.
  controller.abort();
  await sleep(BACKOFF_SETTLED_MS - (performance.now() - openedAt));
  const loopFrom = { at: performance.now(), usage: units(stack.usage().functions.stream) };
  await sleep(IDLE_END_MS - END_MARGIN_MS - (performance.now() - openedAt));
  const loopTo = { at: performance.now(), usage: units(stack.usage().functions.stream) };
  while (stack.usage().functions.stream.completed < 1) {
    if (performance.now() - openedAt > IDLE_END_MS + 30_000) throw new Error('the abandoned stream did not end');
    await sleep(100);
  }
  const endedAt = performance.now();
  const ended = units(stack.usage().functions.stream);
  const start = loopFrom.usage;
  const end = minus(ended, loopTo.usage);
  const loopMinutes = (loopTo.at - loopFrom.at) / 60_000;
  const loop = minus(loopTo.usage, loopFrom.usage);
  const perMinute = { readUnits: loop.readUnits / loopMinutes, writeUnits: loop.writeUnits / loopMinutes, calls: loop.calls / loopMinutes };
  /** Minutes the start and the end took, outside the steady loop. */
  const onceMinutes = (loopFrom.at - openedAt + (endedAt - loopTo.at)) / 60_000;
  const gbSecondsPerMinute = (MEMORY_MB.stream / 1024) * 60;
  const rows = LIFETIMES.map(({ label, minutes }) => {
    const steady = Math.max(0, minutes - onceMinutes);
    const readUnits = start.readUnits + end.readUnits + perMinute.readUnits * steady;
    const writeUnits = start.writeUnits + end.writeUnits + perMinute.writeUnits * steady;
    const gbSeconds = gbSecondsPerMinute * minutes;
    const usd = (readUnits * PRICES.dynamoRead.usd + writeUnits * PRICES.dynamoWrite.usd) / 1e6 + gbSeconds * PRICES.lambdaArmGbSecond.usd;
    return { label, minutes, readUnits: Math.round(readUnits), writeUnits: Math.round(writeUnits), gbSeconds: Math.round(gbSeconds), usd };
  });
  const results = {
    measuredAt: new Date().toISOString(),
    settings: { ...DEPLOYED_STREAM, idleEndMs: IDLE_END_MS, memoryMb: MEMORY_MB.stream },
    ranMs: Math.round(endedAt - openedAt),
    start: { ...start, ms: Math.round(loopFrom.at - openedAt) },
    end: { ...end, ms: Math.round(endedAt - loopTo.at) },
    perMinute,
    rows,
  };
  writeFileSync(join(resolve(dirname(fileURLToPath(import.meta.url))), 'abandoned-stream.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeStdout(
    `Abandoned stream ran ${(results.ranMs / 1000).toFixed(1)} s after its client left (idle end ${IDLE_END_MS / 1000} s); its start (${(results.start.ms / 1000).toFixed(1)} s, setup and backoff) ${start.readUnits.toFixed(1)} RRU, ${start.writeUnits.toFixed(1)} WRU and its end (${(results.end.ms / 1000).toFixed(1)} s, cleanup) ${end.readUnits.toFixed(1)} RRU, ${end.writeUnits.toFixed(1)} WRU once; in between, per minute: ${perMinute.calls.toFixed(1)} DynamoDB calls, ${perMinute.readUnits.toFixed(1)} RRU, ${perMinute.writeUnits.toFixed(2)} WRU, ${gbSecondsPerMinute} GB-s (${MEMORY_MB.stream} MB)\n\n`,
  );
  writeStdout('| lifetime of an abandoned stream | minutes | read units | write units | Lambda GB-s | USD |\n| --- | ---: | ---: | ---: | ---: | ---: |\n');
  for (const row of rows) writeStdout(`| ${row.label} | ${row.minutes} | ${row.readUnits} | ${row.writeUnits} | ${row.gbSeconds} | ${row.usd.toFixed(5)} |\n`);
} finally {
  await stack.stop();
}
