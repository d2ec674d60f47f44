/**
 * One SSE stream served alone in a process of its own, as a Lambda execution environment of the
 * stream function serves it: `serveStream` over a runtime built by `createRuntime`, against the
 * local stack's DynamoDB Local. Spawned by sse-hour.ts (bundled with esbuild like the deployed
 * function). It reports, on its last stdout line: every DynamoDB call with the stream's phase
 * (setup, idle, burst, cleanup), its consistency and the units DynamoDB bills for it; the
 * heartbeats and response bytes of the idle phase; peak RSS up to the burst's last delivery; and,
 * when BENCH_CPU_SLICES > 0, the CPU phase: slices of BENCH_SLICE_EVENTS deliveries, each timed
 * from the read that brings them to the read that deletes them, alternated with slices of the
 * reference pipeline (cpu.ts) over the burst's events in this process.
 *
 * Protocol on stdout: `BENCH_IDLE_DONE` (post the burst), `BENCH_SLICE <index>` (post that slice,
 * answer `BENCH_GO` on stdin once the stack has settled), `BENCH_REPORT <json>` (last).
 * Environment: BENCH_TOKEN, BENCH_SESSION, BENCH_IDLE_MS, BENCH_BURST_EVENTS, BENCH_CPU_SLICES,
 * BENCH_SLICE_EVENTS, BENCH_REFERENCE_FILE (the burst's texts, for the yardstick).
 */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { serveStream } from '../../src/relay/sse/serve-stream.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import type { InboxPort } from '../../src/relay/ports/inbox.ts';
import { referenceSlice } from './cpu.ts';
import type { CallRecord, StreamPhase as Phase, StreamProcessReport } from './sse-hour-model.ts';

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
const MB = 1024 * 1024;

const env = process.env;
const idleMs = Number(env.BENCH_IDLE_MS ?? 95_000);
const burstEvents = Number(env.BENCH_BURST_EVENTS ?? 300);
const cpuSlices = Number(env.BENCH_CPU_SLICES ?? 0);
const sliceEvents = Number(env.BENCH_SLICE_EVENTS ?? 50);
/** The least CPU a reference slice takes (a delivery slice of 50 takes about 15 ms here). */
const REFERENCE_SLICE_MS = 20;
const rssAtStart = process.memoryUsage().rss;

const config = readRelayConfig(env);
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};
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
const baseInbox = built.inbox;

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
};
const sampler = setInterval(sample, 50);
let sampling = true;
/** The last sample, once: the CPU phase after the burst is not sampled (its yardstick allocates). */
const stopSampling = () => {
  if (!sampling) return;
  sampling = false;
  clearInterval(sampler);
  sample();
};
const rssBeforeStream = process.memoryUsage().rss;

let sink = 0;
let referenceTexts: string[] | undefined;
/**
 * One slice of the CPU yardstick: the reference pipeline over the burst's events (the texts the
 * parent posts, one a line in BENCH_REFERENCE_FILE, read once the RSS samples are over, so they
 * are not in them, and the bench's event generator is not in this bundle), for at least
 * `REFERENCE_SLICE_MS` of this thread's CPU (`referenceSlice`).
 */
function nextReferenceSlice(): { events: number; cpuMs: number } {
  if (referenceTexts === undefined) {
    referenceTexts = readFileSync(env.BENCH_REFERENCE_FILE ?? '', 'utf8').split('\n').filter((line) => line !== '');
    if (referenceTexts.length === 0) throw new Error('BENCH_REFERENCE_FILE holds no events');
    timeReference(referenceTexts);
  }
  return timeReference(referenceTexts);
}

function timeReference(texts: readonly string[]): { events: number; cpuMs: number } {
  const slice = referenceSlice(texts, REFERENCE_SLICE_MS);
  sink += slice.sink;
  return { events: slice.events, cpuMs: slice.cpuMs };
}

const response = new PassThrough();
let delivered = 0;
let heartbeats = 0;
let idleBytes = 0;
let text = '';
let burstCpu: NodeJS.CpuUsage | undefined;
let burstCpuMs = 0;
const say = (line: string) => process.stdout.write(`${line}\n`);

// The CPU phase: the slices taken and the reference slices around them, the slice being sent,
// and when the timed work's last event arrived (the next read deletes its events and ends it).
const cpuSliceRecords: Array<{ deliveries: number; cpuMs: number; reads: number; calls: number }> = [];
const referenceSliceRecords: Array<{ events: number; cpuMs: number }> = [];
let slice: { delivered: number; startCpu?: NodeJS.CpuUsage; reads: number; callsAtStart: number } | undefined;
let lastEventAt: number | undefined;
// A slice's first read waits until the parent says its events are all in the inbox (fan-out has
// settled), so every slice is read alike: one read brings its events, the next deletes them.
// Read as they reach fan-out, a slice took two or three reads, and each read's calls cost about
// as much CPU as 25 deliveries: the spread was in how the stack's latency split the slice.
let gate: { opened: Promise<void>; open: () => void } | undefined;
const closeGate = () => {
  let open = () => {};
  const opened = new Promise<void>((resolveGate) => (open = resolveGate));
  gate = { opened, open };
};
let stdinText = '';
process.stdin.on('data', (chunk: Buffer) => {
  stdinText += chunk.toString('utf8');
  let end: number;
  while ((end = stdinText.indexOf('\n')) !== -1) {
    const line = stdinText.slice(0, end);
    stdinText = stdinText.slice(end + 1);
    if (line.startsWith('BENCH_GO')) {
      gate?.open();
      gate = undefined;
    }
  }
});

/** After every inbox read of the CPU phase: starts a slice's timing, or ends it and takes the next pair. */
function afterRead(startedAt: number, startCpu: NodeJS.CpuUsage, callsAtStart: number, found: number): void {
  if (slice !== undefined && slice.startCpu === undefined && found > 0) {
    slice.startCpu = startCpu;
    slice.callsAtStart = callsAtStart;
  }
  if (slice?.startCpu !== undefined) slice.reads += 1;
  if (lastEventAt === undefined || startedAt < lastEventAt) return;
  lastEventAt = undefined;
  if (slice?.startCpu !== undefined) cpuSliceRecords.push({ deliveries: slice.delivered, cpuMs: cpuMsSince(slice.startCpu), reads: slice.reads, calls: calls.length - slice.callsAtStart });
  slice = undefined;
  referenceSliceRecords.push(nextReferenceSlice());
  if (cpuSliceRecords.length < cpuSlices) {
    slice = { delivered: 0, reads: 0, callsAtStart: 0 };
    closeGate();
    say(`BENCH_SLICE ${cpuSliceRecords.length}`);
  } else {
    enter('cleanup');
    response.destroy();
    process.stdin.destroy();
  }
}

/** The stream's inbox, each read timed for the CPU phase. */
const timedInbox: InboxPort = {
  append: (tenant, streamId, body) => baseInbox.append(tenant, streamId, body),
  notifyClosing: (tenant, streamId, reason) => baseInbox.notifyClosing(tenant, streamId, reason),
  reader: (tenant, streamId) => {
    const read = baseInbox.reader(tenant, streamId);
    return async () => {
      if (gate !== undefined) await gate.opened;
      const startedAt = performance.now();
      const startCpu = process.cpuUsage();
      const callsAtStart = calls.length;
      const items = await read();
      afterRead(startedAt, startCpu, callsAtStart, items.length);
      return items;
    };
  },
};
const runtime = { ...built, inbox: timedInbox };
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
      if (slice !== undefined) {
        slice.delivered += 1;
        if (slice.delivered === sliceEvents) lastEventAt = performance.now();
        continue;
      }
      delivered += 1;
      if (delivered === burstEvents) {
        burstCpuMs = burstCpu === undefined ? 0 : cpuMsSince(burstCpu);
        stopSampling();
        if (cpuSlices > 0) {
          lastEventAt = performance.now();
          continue;
        }
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
stopSampling();
const now = performance.now();
const phaseMs: Record<Phase, number> = {
  setup: phaseStartedAt.idle - phaseStartedAt.setup,
  idle: phaseStartedAt.burst - phaseStartedAt.idle,
  burst: phaseStartedAt.cleanup - phaseStartedAt.burst,
  cleanup: now - phaseStartedAt.cleanup,
};
const report: StreamProcessReport = {
  calls,
  phaseMs,
  delivered,
  heartbeats,
  idleBytes,
  rss: { atStartMb: rssAtStart / MB, beforeStreamMb: rssBeforeStream / MB, peakMb: peakRss / MB, peakHeapUsedMb: peakHeap / MB },
  burstCpuMs,
  ...(cpuSlices > 0 ? { cpuSlices: cpuSliceRecords, referenceSlices: referenceSliceRecords } : {}),
};
if (sink === 0 && cpuSlices > 0) throw new Error('the reference pipeline computed nothing');
client.destroy();
say(`BENCH_REPORT ${JSON.stringify(report)}`);
process.exit(0);
