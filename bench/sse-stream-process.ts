/**
 * One SSE stream served alone in a process of its own, as a Lambda execution environment of the
 * stream function serves it: `serveStream` over a runtime built by `createRuntime`, against the
 * local stack's DynamoDB Local. Spawned by bench/sse-stream-hour.ts (bundled with esbuild like the
 * deployed function, run with plain node); reports on its last stdout line, as JSON:
 * - every DynamoDB call with the phase of the stream it fell in (setup before the replay-to-live
 *   handoff, idle, burst, cleanup after the client left), its consistency and item count, and the
 *   units DynamoDB would bill for it (reported units, but never below the least a call is billed);
 * - the heartbeats and the response bytes of the idle phase (heartbeats and their flush padding);
 * - the process's RSS and heap, sampled every 50 ms, and the CPU it spent on the burst, with the
 *   CPU yardstick beside it: the fixed reference pipeline (bench/cpu-reference.ts) over the
 *   burst's events, timed in the same process once the stream has ended (after the RSS samples,
 *   so its allocations are not in the peak).
 *
 * Input (environment, besides the relay's own variables the local stack set): BENCH_TOKEN,
 * BENCH_SESSION, BENCH_IDLE_MS (how long the stream is left idle), BENCH_BURST_EVENTS (deliveries
 * the parent posts after the idle phase), BENCH_REFERENCE_FILE (those events' texts, for the yardstick), BENCH_VARIANT (`before`: every read strongly consistent,
 * no backoff; `after`: as the relay now runs).
 */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { readRelayConfig } from '../src/config/relay-config.ts';
import { createLogger } from '../src/observability/logger.ts';
import { serveStream } from '../src/relay/sse/serve-stream.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { InboxStore } from '../src/store/inbox-store.ts';
import { createRuntime } from '../functions/runtime/create-runtime.ts';
import { LOCAL_CREDENTIALS } from '../local/local-credentials.ts';
import { referencePipeline } from './cpu-reference.ts';
import type { CallRecord, StreamPhase as Phase, StreamProcessReport } from './sse-stream-hour-model.ts';

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
const MB = 1024 * 1024;

const env = process.env;
const variant = env.BENCH_VARIANT ?? 'after';
const idleMs = Number(env.BENCH_IDLE_MS ?? 95_000);
const burstEvents = Number(env.BENCH_BURST_EVENTS ?? 300);
const rssAtStart = process.memoryUsage().rss;

const baseConfig = readRelayConfig(env);
// Before: the inbox polled at the base rate for the stream's whole life (no backoff).
const config = variant === 'before' ? { ...baseConfig, sse: { ...baseConfig.sse, idlePollMs: baseConfig.sse.pollMs } } : baseConfig;
const tableLabels = new Map(Object.entries(config.tables).map(([label, name]) => [name, label]));

let phase: Phase = 'setup';
const phaseStartedAt: Record<Phase, number> = { setup: performance.now(), idle: 0, burst: 0, cleanup: 0 };
const enter = (next: Phase) => {
  phase = next;
  phaseStartedAt[next] = performance.now();
};
const calls: CallRecord[] = [];
const client = createDynamoClient({ region: config.region, ...(config.dynamoEndpoint === undefined ? {} : { endpoint: config.dynamoEndpoint }), credentials: LOCAL_CREDENTIALS });
client.middlewareStack.add(
  (next, context) => async (args) => {
    const command = String(context.commandName);
    const kind = READS.has(command) ? 'read' : WRITES.has(command) ? 'write' : undefined;
    if (kind === undefined) return next(args);
    const input = args.input as Record<string, unknown>;
    input.ReturnConsumedCapacity = 'TOTAL';
    const consistent = input.ConsistentRead === true;
    const tableName = typeof input.TableName === 'string' ? input.TableName : Object.keys((input.RequestItems ?? {}) as Record<string, unknown>)[0];
    const table = tableName === undefined ? undefined : tableLabels.get(tableName);
    const items = command === 'BatchWriteItemCommand' ? Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>).reduce((sum, list) => sum + list.length, 0) : 1;
    // The least DynamoDB bills a call: a read of up to 4 KB (half a unit eventually consistent,
    // one strongly), a write of one unit per item, a refused conditional write included.
    const floor = kind === 'read' ? (consistent ? 1 : 0.5) : items;
    const record = (reported: number) => calls.push({ phase, command, ...(table === undefined ? {} : { table }), kind, consistent, billedUnits: Math.max(floor, reported) });
    try {
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
      const entries = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
      record(entries.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0));
      return result;
    } catch (error) {
      record(0);
      throw error;
    }
  },
  { step: 'initialize', name: 'benchCallLog' },
);
const built = createRuntime({ config, dynamo: client });
const runtime = variant === 'before' ? { ...built, inbox: new InboxStore(client, { tableName: config.tables.connections, now: Date.now, mintId: () => built.mintId(), lifetimeSeconds: 3600, probeFirst: false }) } : built;

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
};
const sampler = setInterval(sample, 50);
const rssBeforeStream = process.memoryUsage().rss;

/**
 * The CPU yardstick: the reference pipeline over the burst's events (the texts the parent
 * posts, one a line in BENCH_REFERENCE_FILE, read only now so they are not in the RSS samples and
 * the bench's event generator is not in this bundle), in 5 slices of about 100 ms of this
 * process's CPU each; the median ms of CPU per event.
 */
function referenceCpuMsPerEvent(): number | undefined {
  if (env.BENCH_REFERENCE_FILE === undefined) return undefined;
  const texts = readFileSync(env.BENCH_REFERENCE_FILE, 'utf8').split('\n').filter((line) => line !== '');
  if (texts.length === 0) return undefined;
  const slices: number[] = [];
  for (let slice = 0; slice < 5; slice += 1) {
    const started = process.cpuUsage();
    let events = 0;
    let spentMs = 0;
    while (events < texts.length || spentMs < 100) {
      referencePipeline(texts);
      events += texts.length;
      const used = process.cpuUsage(started);
      spentMs = (used.user + used.system) / 1000;
    }
    slices.push(spentMs / events);
  }
  return slices.sort((a, b) => a - b)[2] as number;
}

const response = new PassThrough();
let delivered = 0;
let heartbeats = 0;
let idleBytes = 0;
let text = '';
let burstCpu: NodeJS.CpuUsage | undefined;
let burstCpuMs = 0;
const say = (line: string) => process.stdout.write(`${line}\n`);
response.on('data', (chunk: Buffer) => {
  if (phase === 'idle') idleBytes += chunk.length;
  text += chunk.toString('utf8');
  let end: number;
  while ((end = text.indexOf('\n\n')) !== -1) {
    const message = text.slice(0, end);
    text = text.slice(end + 2);
    if (message.startsWith(': replay-complete')) {
      enter('idle');
      setTimeout(() => {
        enter('burst');
        burstCpu = process.cpuUsage();
        say('BENCH_IDLE_DONE');
      }, idleMs);
    } else if (message.startsWith(': ping')) heartbeats += 1;
    else if (message.includes('\ndata: ') || message.startsWith('event: ') || message.startsWith('id: ')) {
      delivered += 1;
      if (delivered === burstEvents) {
        const used = process.cpuUsage(burstCpu);
        burstCpuMs = (used.user + used.system) / 1000;
        // The client leaves; the handler notices at its next write or read.
        enter('cleanup');
        response.destroy();
      }
    }
  }
});

const logger = createLogger({ service: 'bench-sse-stream' });
const deadline = Date.now() + 15 * 60_000;
await serveStream(runtime, logger, {
  request: { method: 'GET', path: '/stream', headers: { authorization: `Bearer ${env.BENCH_TOKEN ?? ''}` }, query: { filter: JSON.stringify({ session: env.BENCH_SESSION ?? '' }) } },
  open: () => response,
  remainingMs: () => deadline - Date.now(),
});
clearInterval(sampler);
sample();
const now = performance.now();
const phaseMs: Record<Phase, number> = {
  setup: phaseStartedAt.idle - phaseStartedAt.setup,
  idle: phaseStartedAt.burst - phaseStartedAt.idle,
  burst: phaseStartedAt.cleanup - phaseStartedAt.burst,
  cleanup: now - phaseStartedAt.cleanup,
};
const report: StreamProcessReport = {
  variant,
  calls,
  phaseMs,
  delivered,
  heartbeats,
  idleBytes,
  rss: { atStartMb: rssAtStart / MB, beforeStreamMb: rssBeforeStream / MB, peakMb: peakRss / MB, peakHeapUsedMb: peakHeap / MB },
  burstCpuMs,
};
const reference = referenceCpuMsPerEvent();
if (reference !== undefined) report.referenceCpuMsPerEvent = reference;
client.destroy();
say(`BENCH_REPORT ${JSON.stringify(report)}`);
process.exit(0);
