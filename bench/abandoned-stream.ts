/**
 * `npm run bench:abandoned`: what one abandoned SSE stream (a closed tab) costs. Lambda does not
 * tell a streaming function that its client left, so the stream runs until it ends by itself:
 * before the idle end, at its duration limit (14 minutes); now after `AEP_SSE_IDLE_END_MS`
 * (5 minutes) with nothing to deliver.
 *
 * Measured on the local stack with the deployed poll interval (250 ms): one stream is opened
 * and its client leaves at once; the handler runs on, unaware, until its idle end (shortened
 * here to BENCH_IDLE_END_MS, default 20 s). What it consumed per minute is measured (DynamoDB
 * read and write units, function duration) and multiplied out over each lifetime, priced with
 * bench/prices.ts. Writes bench/abandoned-stream.json and prints a Markdown table.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../local/stack.ts';
import { MEMORY_MB, PRICES } from './prices.ts';

const IDLE_END_MS = Number(process.env.BENCH_IDLE_END_MS ?? 20_000);
/** The deployed inbox poll interval (infra/constructs/relay-functions.ts). */
const POLL_MS = 250;
const LIFETIMES = [
  { label: 'before: until the duration limit', minutes: 14 },
  { label: 'now: until the idle end (default)', minutes: 5 },
];

// Handler log lines go to stdout; keep the table readable.
const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.startsWith('{')) return true;
  return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

const stack = await startStack({
  port: 0,
  inMemory: true,
  dataDir: mkdtempSync(join(tmpdir(), 'aep-abandoned-')),
  env: { AEP_SSE_POLL_MS: String(POLL_MS), AEP_SSE_HEARTBEAT_MS: '15000', AEP_SSE_IDLE_END_MS: String(IDLE_END_MS), AEP_SSE_MAX_DURATION_MS: String(IDLE_END_MS + 60_000) },
});
try {
  stack.resetUsage();
  const controller = new AbortController();
  const response = await fetch(`${stack.baseUrl}/stream`, { headers: { authorization: `Bearer ${stack.devToken}` }, signal: controller.signal });
  const openedAt = performance.now();
  if (response.status !== 200) throw new Error(`stream refused: ${response.status}`);
  // The tab closes: the client is gone, the function is not told.
  controller.abort();
  // Setup (authentication, connection, subscription, slot) is paid once; measure the loop after it.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const setup = { ...stack.usage().functions.stream };
  const loopFrom = performance.now();
  // ...and stop measuring the loop just before the idle end, so the cleanup is counted apart.
  await new Promise((resolve) => setTimeout(resolve, Math.max(1_000, IDLE_END_MS - 3_500)));
  const loop = { ...stack.usage().functions.stream };
  const loopMs = performance.now() - loopFrom;
  while (stack.usage().functions.stream.completed < 1) {
    if (performance.now() - openedAt > IDLE_END_MS + 30_000) throw new Error('the abandoned stream did not end');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ranMs = performance.now() - openedAt;
  const usage = stack.usage().functions.stream;
  const teardown = { readUnits: usage.readUnits - loop.readUnits, writeUnits: usage.writeUnits - loop.writeUnits };
  const perMinute = { readUnits: ((loop.readUnits - setup.readUnits) / loopMs) * 60_000, writeUnits: ((loop.writeUnits - setup.writeUnits) / loopMs) * 60_000 };
  const gbSecondsPerMinute = (MEMORY_MB.stream / 1024) * 60;
  // DynamoDB Local reports no consumed capacity for a query that finds nothing, but DynamoDB
  // bills one read unit at least for each strongly consistent inbox poll: priced from the count.
  perMinute.readUnits += (60_000 / POLL_MS) * 1;
  const rows = LIFETIMES.map(({ label, minutes }) => {
    const readUnits = setup.readUnits + teardown.readUnits + perMinute.readUnits * minutes;
    const writeUnits = setup.writeUnits + teardown.writeUnits + perMinute.writeUnits * minutes;
    const gbSeconds = gbSecondsPerMinute * minutes;
    const usd = (readUnits * PRICES.dynamoRead.usd + writeUnits * PRICES.dynamoWrite.usd) / 1e6 + gbSeconds * PRICES.lambdaArmGbSecond.usd;
    return { label, minutes, readUnits: Math.round(readUnits), writeUnits: Math.round(writeUnits), gbSeconds: Math.round(gbSeconds), usd };
  });
  const results = { measuredAt: new Date().toISOString(), idleEndMs: IDLE_END_MS, ranMs: Math.round(ranMs), setup: { readUnits: setup.readUnits, writeUnits: setup.writeUnits }, teardown, perMinute, rows };
  writeFileSync(join(resolve(dirname(fileURLToPath(import.meta.url))), 'abandoned-stream.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeStdout(`Abandoned stream ran ${(ranMs / 1000).toFixed(1)} s after its client left (idle end ${IDLE_END_MS / 1000} s); setup ${setup.readUnits.toFixed(1)} RRU, ${setup.writeUnits.toFixed(1)} WRU and cleanup ${teardown.readUnits.toFixed(1)} RRU, ${teardown.writeUnits.toFixed(1)} WRU once; in between, per minute: ${perMinute.readUnits.toFixed(1)} RRU, ${perMinute.writeUnits.toFixed(2)} WRU, ${gbSecondsPerMinute} GB-s\n\n`);
  writeStdout('| lifetime of an abandoned stream | minutes | read units | write units | Lambda GB-s | USD |\n| --- | ---: | ---: | ---: | ---: | ---: |\n');
  for (const row of rows) writeStdout(`| ${row.label} | ${row.minutes} | ${row.readUnits} | ${row.writeUnits} | ${row.gbSeconds} | ${row.usd.toFixed(5)} |\n`);
} finally {
  await stack.stop();
}
