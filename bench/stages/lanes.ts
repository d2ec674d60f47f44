/**
 * Fan-out with delivery lanes: one tenant's session with S subscribers (seeded as live index
 * entries), a burst POSTed at once, delivered by W processes (W = 1 the fan-out invocation alone,
 * W − 1 lane workers beside it), each W on a fresh stack, posting to the stand-in poster
 * (`local/stand-in-poster.ts`). The yardstick is W = 1 at the same S. Also the AWS model.
 */
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, WriteRequest } from '@aws-sdk/client-dynamodb';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localTableNames } from '../../local/create-tables.ts';
import { startStack } from '../../local/stack.ts';
import { parseSamples, STANDIN_VARIABLES } from '../../local/stand-in-poster.ts';
import { RELAY_VARIABLES } from '../../src/config/relay-environment.ts';
import { validateFilter } from '../../src/protocol/attr-match.ts';
import { connectionKeys } from '../../src/store/keys.ts';
import { expiresAfter } from '../../src/store/table-access.ts';
import { createTenant, inPool, localDynamo, postEvents, settle, sleep, uniqueName } from '../clients.ts';
import { PRICES } from '../pricing.ts';
import { distribution } from '../stats.ts';
import type { Distribution } from '../stats.ts';
import { benchEvents } from '../workload.ts';

export interface LanesRun {
  workers: number;
  subscribers: number;
  events: number;
  expectedDeliveries: number;
  deliveries: number;
  deliveriesPerSecond: number;
  firstDeliveryMs: number;
  latency: Distribution;
  fanoutInvocations: number;
  laneInvocations: number;
  laneFailures: number;
  cpuMs: number;
}

export interface LanesStageResult {
  settings: { postMs: number; laneDeliveries: number; concurrency: number; deliveriesPerRun: number; pollMs: number };
  runs: LanesRun[];
}

type LanesPlan = { workers: readonly number[]; sizes: readonly number[]; deliveriesPerRun: number; postMs: number; laneDeliveries: number; log: (message: string) => void };

const POLL_MS = 100;
const RUN_TIMEOUT_MS = 120_000;
const SUBSCRIPTION_ID = 's1';

const eventsFor = (deliveriesPerRun: number, subscribers: number) => Math.max(1, Math.round(deliveriesPerRun / subscribers));

/** CPU milliseconds a process has used so far, from /proc (Linux; USER_HZ 100); 0 once it is gone. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** This process's children whose command line holds `marker`. */
function childrenRunning(marker: string): number[] {
  return readdirSync('/proc').filter((entry) => {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

export async function runFanoutLanes(plan: LanesPlan): Promise<LanesStageResult> {
  const runs: LanesRun[] = [];
  let concurrency = 0;
  for (const workers of plan.workers) {
    const samplesDir = mkdtempSync(join(tmpdir(), `aep-lanes-w${workers}-`));
    delete process.env[RELAY_VARIABLES.laneFunction];
    delete process.env[RELAY_VARIABLES.laneEndpoint];
    plan.log(`lanes: ${workers} delivering process${workers === 1 ? '' : 'es'}; starting a stack`);
    const stack = await startStack({
      port: 0,
      inMemory: true,
      dataDir: join(samplesDir, 'data'),
      env: {
        AEP_LOCAL_POLL_MS: String(POLL_MS),
        AEP_LOCAL_LANE_WORKERS: String(workers - 1),
        AEP_FANOUT_MAX_LANES: String(workers),
        AEP_FANOUT_LANE_DELIVERIES: String(plan.laneDeliveries),
        AEP_FANOUT_TENANT_DELIVERIES: '1000000',
        [STANDIN_VARIABLES.postMs]: String(plan.postMs),
        [STANDIN_VARIABLES.logDir]: samplesDir,
      },
    });
    concurrency = stack.config.fanout.concurrency;
    const client = localDynamo(stack.dynamoEndpoint);
    try {
      const tenant = uniqueName('bench-lanes');
      const context = { stack, token: await createTenant(stack.dynamoEndpoint, tenant), session: uniqueName('lanes'), workers, samples: new SampleFiles(samplesDir), seq: 0 };
      const sizes = [...plan.sizes].sort((a, b) => a - b);
      let seeded = 0;
      for (const [index, size] of sizes.entries()) {
        await seedSubscriptions(client, tenant, context.session, seeded, size);
        seeded = size;
        if (index === 0) await burst(context, size, eventsFor(plan.deliveriesPerRun, size) / 5);
        const run = await burst(context, size, eventsFor(plan.deliveriesPerRun, size));
        runs.push(run);
        plan.log(`  W=${workers} S=${size}: ${run.deliveries}/${run.expectedDeliveries} deliveries, ${run.deliveriesPerSecond.toFixed(0)}/s, p50 ${run.latency.p50.toFixed(0)} ms, ${run.fanoutInvocations} + ${run.laneInvocations} invocations, CPU ${run.cpuMs.toFixed(0)} ms`);
      }
    } finally {
      client.destroy();
      await stack.stop();
      rmSync(samplesDir, { recursive: true, force: true });
    }
  }
  delete process.env[STANDIN_VARIABLES.postMs];
  delete process.env[STANDIN_VARIABLES.logDir];
  return { settings: { postMs: plan.postMs, laneDeliveries: plan.laneDeliveries, concurrency, deliveriesPerRun: plan.deliveriesPerRun, pollMs: POLL_MS }, runs };
}

type BurstContext = { stack: Awaited<ReturnType<typeof startStack>>; token: string; session: string; workers: number; samples: SampleFiles; seq: number };

/** One timed burst: `events` POSTed at once to the session's `subscribers`. */
async function burst(context: BurstContext, subscribers: number, eventCount: number): Promise<LanesRun> {
  const { stack, samples } = context;
  const events = Math.max(1, Math.round(eventCount));
  const expected = events * subscribers;
  await settle(stack, 300, RUN_TIMEOUT_MS);
  samples.mark();
  stack.resetUsage();
  const lanePids = childrenRunning('lane-worker-process');
  if (lanePids.length !== context.workers - 1) throw new Error(`expected ${context.workers - 1} lane worker processes, found ${lanePids.length}`);
  const laneCpu = () => lanePids.reduce((total, pid) => total + processCpuMs(pid), 0);
  const [stackBefore, lanesBefore] = [process.cpuUsage(), laneCpu()];
  const emitMs = Math.round((performance.timeOrigin + performance.now()) * 100) / 100;
  const body = benchEvents(context.session, events, context.seq).map((event) => JSON.stringify({ ...event, data: { ...(event.data as Record<string, unknown>), benchEmitMs: emitMs } }));
  context.seq += events;
  await postEvents(stack.baseUrl, context.token, `${body.join('\n')}\n`, 'application/x-ndjson');
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (samples.poll() < expected) {
    if (Date.now() > deadline) throw new Error(`lanes run W=${context.workers} S=${subscribers}: ${samples.poll()} of ${expected} deliveries after ${RUN_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
  const stackCpu = process.cpuUsage(stackBefore);
  const cpuMs = (stackCpu.user + stackCpu.system) / 1000 + laneCpu() - lanesBefore;
  await settle(stack, 500, RUN_TIMEOUT_MS);
  samples.poll();
  const usage = stack.usage();
  const all = samples.take();
  const done = all.map((sample) => sample.doneMs);
  return {
    workers: context.workers,
    subscribers,
    events,
    expectedDeliveries: expected,
    deliveries: all.length,
    deliveriesPerSecond: all.length / ((Math.max(...done) - emitMs) / 1000),
    firstDeliveryMs: Math.min(...done) - emitMs,
    latency: distribution(all.map((sample) => sample.doneMs - sample.emitMs)),
    fanoutInvocations: usage.functions.fanout.invocations,
    laneInvocations: usage.functions.fanoutlane.invocations,
    laneFailures: usage.functions.fanoutlane.errors,
    cpuMs,
  };
}

/** Subscriptions `from` to `to` as the live index entries a handed-off subscribe leaves (`src/store/subscription-store.ts`). */
async function seedSubscriptions(client: DynamoDBClient, tenant: string, session: string, from: number, to: number): Promise<void> {
  const filter = { session };
  if (!validateFilter(filter).ok) throw new Error('the seeded filter does not validate');
  const table = localTableNames('aep-local').connections;
  const expiresAt = String(expiresAfter(Date.now(), 3600 * 4));
  const requests: WriteRequest[] = [];
  for (let index = from; index < to; index += 1) {
    const connectionId = connectionIdOf(index);
    const item = { pk: connectionKeys.sessionSubscriptions(tenant, session), sk: connectionKeys.subscriptionIndexSort(connectionId, SUBSCRIPTION_ID), connectionId, subscriptionId: SUBSCRIPTION_ID, filter: JSON.stringify(filter), state: 'live' };
    requests.push({ PutRequest: { Item: { ...Object.fromEntries(Object.entries(item).map(([key, value]) => [key, { S: value }])), expiresAt: { N: expiresAt } } } });
  }
  const chunks: WriteRequest[][] = [];
  for (let offset = 0; offset < requests.length; offset += 25) chunks.push(requests.slice(offset, offset + 25));
  await inPool(chunks, 8, async (chunk) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt > 8) throw new Error('DynamoDB Local left subscription writes unprocessed');
      const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = result.UnprocessedItems?.[table] ?? [];
      if (pending.length > 0) await sleep(2 ** attempt * 25);
    }
  });
}

/** A connection id shaped like API Gateway's (12 characters ending in `=`), unique per index. */
function connectionIdOf(index: number): string {
  return `L${index.toString(36).padStart(10, '0')}=`;
}

/** The stand-in posters' sample files, read as they grow: `mark()` starts a run, `poll()` counts its samples, `take()` parses them. */
class SampleFiles {
  private offsets = new Map<string, number>();
  private chunks = new Map<string, string[]>();
  private lines = 0;

  constructor(private readonly dir: string) {}

  mark(): void {
    for (const name of this.files()) this.offsets.set(name, statSync(join(this.dir, name)).size);
    this.chunks = new Map();
    this.lines = 0;
  }

  poll(): number {
    for (const name of this.files()) {
      const path = join(this.dir, name);
      const from = this.offsets.get(name) ?? 0;
      const size = statSync(path).size;
      if (size <= from) continue;
      const buffer = Buffer.alloc(size - from);
      const fd = openSync(path, 'r');
      try {
        readSync(fd, buffer, 0, buffer.length, from);
      } finally {
        closeSync(fd);
      }
      const whole = buffer.lastIndexOf(0x0a) + 1;
      if (whole === 0) continue;
      const text = buffer.subarray(0, whole).toString('utf8');
      this.offsets.set(name, from + whole);
      const list = this.chunks.get(name) ?? [];
      list.push(text);
      this.chunks.set(name, list);
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.lines += 1;
    }
    return this.lines;
  }

  take(): Array<{ emitMs: number; doneMs: number }> {
    return [...this.chunks.values()].flatMap((list) => parseSamples(list.join('')));
  }

  private files(): string[] {
    return readdirSync(this.dir).filter((name) => name.endsWith('.samples'));
  }
}

// The AWS model, S subscribers fed λ events/s: each connection busy λ × post latency (one post at
// a time, its order); a lane carries min(posts in flight ÷ post latency, its vCPU ÷ CPU per
// delivery); lanes = twice what carries S × λ; a batch lasts D = F ÷ (1 − the busier), p99 ≈ 2D.

/** One vCPU at 1,769 MB (Lambda); API Gateway's adjustable account throttle (requests/s). */
const MB_PER_VCPU = 1769;
const API_GATEWAY_ACCOUNT_RPS = 10_000;
/** Records per fan-out batch at most (`FANOUT_BATCH_SIZE`, infra/constructs/fanout.ts). */
export const MAX_RECORDS_PER_BATCH = 100;

/** The target: 10,000 subscribers of one tenant, a 50 events/s stream, p99 under 1 s. */
export const TARGET = { subscribers: 10_000, eventsPerSecond: 50, p99Ms: 1000 } as const;

interface LaneModelInputs {
  subscribers: number;
  eventsPerSecond: number;
  postMs: number;
  postsPerLane: number;
  laneMemoryMb: number;
  cpuMsPerDelivery: number;
  batchFixedMs: number;
}

export function lanesModel(inputs: LaneModelInputs) {
  const postSeconds = inputs.postMs / 1000;
  const deliveriesPerSecond = inputs.subscribers * inputs.eventsPerSecond;
  const connectionBusy = inputs.eventsPerSecond * postSeconds;
  const latencyBoundPerLane = inputs.postsPerLane / postSeconds;
  const cpuBoundPerLane = inputs.cpuMsPerDelivery > 0 ? inputs.laneMemoryMb / MB_PER_VCPU / (inputs.cpuMsPerDelivery / 1000) : Number.POSITIVE_INFINITY;
  const ratePerLane = Math.min(latencyBoundPerLane, cpuBoundPerLane);
  const lanes = 2 * Math.ceil(deliveriesPerSecond / ratePerLane);
  const busy = Math.max(connectionBusy, deliveriesPerSecond / (lanes * ratePerLane));
  const fixedSeconds = inputs.batchFixedMs / 1000;
  let batchSeconds = busy < 1 ? fixedSeconds / (1 - busy) : Number.POSITIVE_INFINITY;
  let recordsPerBatch = inputs.eventsPerSecond * batchSeconds;
  let sustainable = busy < 1;
  if (!(recordsPerBatch <= MAX_RECORDS_PER_BATCH)) {
    recordsPerBatch = MAX_RECORDS_PER_BATCH;
    batchSeconds = fixedSeconds + (MAX_RECORDS_PER_BATCH * busy) / inputs.eventsPerSecond;
    sustainable = sustainable && MAX_RECORDS_PER_BATCH / batchSeconds >= inputs.eventsPerSecond;
  }
  const laneDuration = (1e6 / ratePerLane) * (inputs.laneMemoryMb / 1024) * PRICES.lambdaArmGbSecond.usd;
  const laneRequests = (((lanes - 1) * 1e6) / (recordsPerBatch * inputs.subscribers)) * PRICES.lambdaRequest.usd / 1e6;
  const websocketMessages = PRICES.websocketMessage.usd;
  return {
    deliveriesPerSecond, connectionBusy, latencyBoundPerLane, cpuBoundPerLane, ratePerLane, lanes, sustainable, recordsPerBatch,
    batchMs: batchSeconds * 1000,
    p99Ms: sustainable ? 2 * batchSeconds * 1000 : Number.POSITIVE_INFINITY,
    dollarsPerMillion: { laneDuration, laneRequests, websocketMessages, total: laneDuration + laneRequests + websocketMessages },
    apiGatewayRps: deliveriesPerSecond,
    apiGatewayQuotaMultiple: deliveriesPerSecond / API_GATEWAY_ACCOUNT_RPS,
  };
}

/** The rate had every process kept `concurrency` posts in flight from the first delivery on, no connection faster than its posts in a row. */
export function postingBound(run: LanesRun, settings: Pick<LanesStageResult['settings'], 'concurrency' | 'postMs'>): number {
  const postSeconds = settings.postMs / 1000;
  const posting = Math.max(run.deliveries / ((run.workers * settings.concurrency) / postSeconds), run.events * postSeconds);
  return run.deliveries / (run.firstDeliveryMs / 1000 + posting);
}

/** Assumed time per batch that is not posting, in AWS. */
export const ASSUMED_BATCH_FIXED_MS = 200;
