/**
 * One SSE stream served alone in a process, as a Lambda execution environment of the stream
 * function serves it (spawned by sse-hour.ts, bundled like the deployed function). Its last
 * stdout line, `BENCH_REPORT <json>`, holds every DynamoDB call with its phase (setup, idle,
 * burst, cleanup) and billed units, the idle heartbeats and bytes, peak RSS up to the burst's last
 * delivery, the burst's CPU, and the reference pipeline's CPU per event over the burst's events.
 * It says `BENCH_IDLE_DONE` when the parent should post the burst.
 * Environment: BENCH_TOKEN, BENCH_SESSION, BENCH_IDLE_MS, BENCH_BURST_EVENTS.
 */
import { PassThrough } from 'node:stream';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { serveStream } from '../../src/relay/sse/serve-stream.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { referenceSlice } from './cpu.ts';
import type { CallRecord, StreamPhase as Phase, StreamProcessReport } from './sse-hour-model.ts';

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
const MB = 1024 * 1024;
const env = process.env;
const idleMs = Number(env.BENCH_IDLE_MS ?? 95_000);
const burstEvents = Number(env.BENCH_BURST_EVENTS ?? 300);
const rssAtStart = process.memoryUsage().rss;
const config = readRelayConfig(env);
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

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
};
const sampler = setInterval(sample, 50);
const rssBeforeStream = process.memoryUsage().rss;

const response = new PassThrough();
const burstTexts: string[] = [];
let [heartbeats, idleBytes, burstCpuMs, referenceMsPerEvent] = [0, 0, 0, 0];
let burstCpu: NodeJS.CpuUsage | undefined;
let text = '';
response.on('data', (chunk: Buffer) => {
  if (phase === 'idle') idleBytes += chunk.length;
  text += chunk.toString('utf8');
  let end: number;
  while ((end = text.indexOf('\n\n')) !== -1) {
    const message = text.slice(0, end);
    text = text.slice(end + 2);
    const data = message.split('\n').find((line) => line.startsWith('data: '));
    if (message.startsWith(': replay-complete')) {
      enter('idle');
      setTimeout(() => {
        enter('burst');
        burstCpu = process.cpuUsage();
        process.stdout.write('BENCH_IDLE_DONE\n');
      }, idleMs);
    } else if (message.startsWith(': ping')) heartbeats += 1;
    else if (data !== undefined && burstTexts.push(data.slice('data: '.length)) === burstEvents) {
      const used = process.cpuUsage(burstCpu);
      burstCpuMs = (used.user + used.system) / 1000;
      clearInterval(sampler);
      sample();
      referenceSlice(burstTexts, 20); // warm-up
      const reference = referenceSlice(burstTexts, 20);
      if (reference.sink === 0) throw new Error('the reference pipeline computed nothing');
      referenceMsPerEvent = reference.cpuMs / reference.events;
      enter('cleanup');
      response.destroy();
    }
  }
});

const deadline = Date.now() + 15 * 60_000;
await serveStream(createRuntime({ config, dynamo: client }), createLogger({ service: 'bench-sse-stream' }), {
  request: { method: 'GET', path: '/stream', headers: { authorization: `Bearer ${env.BENCH_TOKEN ?? ''}` }, query: { filter: JSON.stringify({ session: env.BENCH_SESSION ?? '' }) } },
  open: () => response,
  remainingMs: () => deadline - Date.now(),
});
clearInterval(sampler);
const phaseMs: Record<Phase, number> = {
  setup: phaseStartedAt.idle - phaseStartedAt.setup,
  idle: phaseStartedAt.burst - phaseStartedAt.idle,
  burst: phaseStartedAt.cleanup - phaseStartedAt.burst,
  cleanup: performance.now() - phaseStartedAt.cleanup,
};
const report: StreamProcessReport = {
  calls,
  phaseMs,
  delivered: burstTexts.length,
  heartbeats,
  idleBytes,
  rss: { atStartMb: rssAtStart / MB, beforeStreamMb: rssBeforeStream / MB, peakMb: peakRss / MB, peakHeapUsedMb: peakHeap / MB },
  burstCpuMs,
  referenceMsPerEvent,
};
client.destroy();
process.stdout.write(`BENCH_REPORT ${JSON.stringify(report)}\n`);
process.exit(0);
