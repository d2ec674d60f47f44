/**
 * Fan-out with delivery lanes at scale (`npm run bench -- --only lanes`, `npm run bench:lanes`):
 * one tenant's session with S subscribers, a burst of events POSTed at once, delivered by W
 * processes: W = 1 is the fan-out invocation alone (`AEP_FANOUT_MAX_LANES=1`, no lane workers);
 * W = 2 and 4 add W − 1 lane worker processes (`AEP_LOCAL_LANE_WORKERS`) with at most W lanes
 * per batch, so each batch runs lane 0 in the invocation and the others in the workers at once.
 *
 * Posts go to the stand-in poster (`local/stand-in-poster.ts`), each a simulated round trip
 * that records when it completed: real sockets by the thousand would make the local gateway's
 * one process the limit for every W, and measure nothing about lanes. The subscriptions are
 * written straight into the connections table as live index entries, for connection ids nothing
 * holds open (the stand-in posts to no socket), before the timed window.
 *
 * Per run: deliveries per second = deliveries ÷ (last completion − POST start); latency from the
 * POST's start to each completion; fan-out and lane invocations; CPU time of every delivering
 * process (the stack's, where fan-out, ingest and the pollers run, and the lane workers'), of
 * DynamoDB Local, and of the machine as a whole, from the POST until the last delivery was read
 * back. Each (W, S) burst runs `repeats` times, once per round, each round every W on a fresh
 * stack of its own (`runFanoutLanes`), every repeat kept in the results: one burst's timed
 * figures moved by more than 15% from one stage run to the next, their median over the repeats
 * did not (`lanes-repeats.ts`). The yardstick is W = 1 at the same S in the same rounds
 * (`lanes-report.ts`).
 */
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, WriteRequest } from '@aws-sdk/client-dynamodb';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { localTableNames } from '../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../local/local-credentials.ts';
import { startStack } from '../local/stack.ts';
import type { RunningStack } from '../local/stack.ts';
import { parseSamples, STANDIN_VARIABLES } from '../local/stand-in-poster.ts';
import { RELAY_VARIABLES } from '../src/config/relay-environment.ts';
import { validateFilter } from '../src/protocol/attr-match.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { connectionKeys } from '../src/store/keys.ts';
import { expiresAfter } from '../src/store/table-access.ts';
import { createTenant, inPool, postEvents, sleep, uniqueName } from './clients.ts';
import { settle } from './cost.ts';
import { deliveringCpuMs, medianRun } from './lanes-repeats.ts';
import { distribution } from './latency.ts';
import type { Distribution } from './latency.ts';
import { cpuWindowFromCollectedHeap } from './full-gc.ts';
import { childProcesses, machineBusyMs, processCpuMs } from './process-cpu.ts';
import { benchEvents } from './workload.ts';

export interface LanesRun {
  /** Delivering processes: the fan-out invocation and W − 1 lane workers. */
  workers: number;
  subscribers: number;
  /** Which of the (W, S)'s repeats (the stage's rounds) this burst was, from 1; absent in results saved before the stage repeated its bursts. */
  repeat?: number;
  events: number;
  expectedDeliveries: number;
  /** Deliveries the stand-in posters recorded (every one carries the bench's emit mark). */
  deliveries: number;
  /** Deliveries ÷ (last completion − POST start). */
  deliveriesPerSecond: number;
  /** POST start → first completion: ingest, the stream poll, ordering, the subscription read, planning, the lane hand-off. */
  firstDeliveryMs: number;
  latency: Omit<Distribution, 'samples'>;
  fanoutInvocations: number;
  laneInvocations: number;
  laneFailures: number;
  /** Deliveries by the process that posted them (`fanout`, `lane0`, `lane1`, …). */
  deliveriesByProcess: Record<string, number>;
  /** CPU (user + system, ms) from the POST until the last delivery was read back. */
  cpuMs: { stack: number; laneWorkers: number; dynamoDbLocal: number; machine: number };
  /** That window (ms). */
  windowMs: number;
  /** Deliveries ÷ CPU-seconds of the delivering processes (the stack's and the lane workers'). */
  deliveriesPerCpuSecond: number;
  /** The machine's 1-minute load average before the run. */
  loadBefore: number;
}

export interface LanesStageResult {
  date: string;
  commit: string;
  durationSeconds: number;
  machineCores: number;
  settings: {
    postMs: number;
    laneDeliveries: number;
    concurrency: number;
    tenantDeliveriesPerBatch: number;
    deliveriesPerRun: number;
    pollMs: number;
    workers: number[];
    subscribers: number[];
    /** Bursts per (W, S); absent in results saved before the stage repeated its bursts (one each). */
    repeats?: number;
    /** True where the repeats ran in rounds, every W on a fresh stack each round; absent where each W's repeats ran in a row on one stack. */
    rounds?: boolean;
  };
  /** Every repeat of every (W, S), in the order they ran. */
  runs: LanesRun[];
}

export interface LanesPlan {
  workers: readonly number[];
  sizes: readonly number[];
  /** Deliveries per run (events = this ÷ subscribers), the same at every size so runs compare. */
  deliveriesPerRun: number;
  /** Rounds: bursts per (W, S), one per round, each on a fresh stack; the report states their median. */
  repeats: number;
  postMs: number;
  /** `AEP_FANOUT_LANE_DELIVERIES`: low enough that every batch of a run splits into W lanes. */
  laneDeliveries: number;
  log: (message: string) => void;
}

const POLL_MS = 100;
const RUN_TIMEOUT_MS = 120_000;
const SUBSCRIPTION_ID = 's1';

/** Events per run at `subscribers`: the plan's deliveries, at least one event. */
export const eventsFor = (deliveriesPerRun: number, subscribers: number) => Math.max(1, Math.round(deliveriesPerRun / subscribers));

/**
 * The order the worker counts take in round `round` (from 1): the plan's order, rotated by one
 * each round, so that no W always runs first or last in a round.
 */
export const roundOrder = (workers: readonly number[], round: number): number[] => workers.map((_, index) => workers[(index + round - 1) % workers.length] as number);

/**
 * The stage, in rounds: each round runs every worker count once, each on a fresh stack of its
 * own, every size on it smallest first, one burst per size; `repeats` rounds. The W = 1 yardstick
 * and the W = 2 and 4 bursts it divides are then minutes apart, not a whole stack's life: run
 * one W after another (seven bursts per size on one stack, then the next W), the stack's CPU per
 * burst at W = 1 drifted up by a third to a half over its seven bursts at 10,000 subscribers
 * (1.42 to 1.96 s in one run, 1.53 to 2.37 s in the next), and W = 2's by a different amount,
 * so deliveries per CPU-second ÷ W = 1 was 0.80× in one full run and 1.12× in the next.
 */
export async function runFanoutLanes(plan: LanesPlan): Promise<LanesStageResult> {
  const startedAt = performance.now();
  const runs: LanesRun[] = [];
  let settings = { concurrency: 0, tenantDeliveriesPerBatch: 0 };
  for (let round = 1; round <= plan.repeats; round += 1) {
    for (const workers of roundOrder(plan.workers, round)) {
      const roundRuns = await runOnFreshStack(plan, workers, round);
      runs.push(...roundRuns.runs);
      settings = roundRuns.settings;
    }
  }
  if (plan.repeats > 1) {
    for (const size of plan.sizes) {
      for (const workers of plan.workers) {
        // The figures the report states: the median over the rounds.
        const repeats = runs.filter((run) => run.workers === workers && run.subscribers === size);
        const middle = medianRun(repeats);
        const rates = repeats.map((run) => run.deliveriesPerSecond);
        plan.log(
          `  W=${workers} S=${String(size).padStart(5)} median of ${repeats.length}: ${middle.deliveriesPerSecond.toFixed(0)}/s (${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}), first ${middle.firstDeliveryMs.toFixed(0)} ms, p50 ${middle.latency.p50.toFixed(0)} ms, p99 ${middle.latency.p99.toFixed(0)} ms, ${middle.deliveriesPerCpuSecond.toFixed(0)} deliveries per CPU-s`,
        );
      }
    }
  }
  const { concurrency, tenantDeliveriesPerBatch } = settings;
  delete process.env[STANDIN_VARIABLES.postMs];
  delete process.env[STANDIN_VARIABLES.logDir];
  return {
    date: new Date().toISOString(),
    commit: gitHead(),
    durationSeconds: (performance.now() - startedAt) / 1000,
    machineCores: cpus().length,
    settings: {
      postMs: plan.postMs,
      laneDeliveries: plan.laneDeliveries,
      concurrency,
      tenantDeliveriesPerBatch,
      deliveriesPerRun: plan.deliveriesPerRun,
      repeats: plan.repeats,
      rounds: true,
      pollMs: POLL_MS,
      workers: [...plan.workers],
      subscribers: [...plan.sizes],
    },
    runs,
  };
}

/** One round's bursts for `workers`: a fresh stack, a discarded warm-up, then one burst per size, smallest first. */
async function runOnFreshStack(plan: LanesPlan, workers: number, round: number): Promise<{ runs: LanesRun[]; settings: { concurrency: number; tenantDeliveriesPerBatch: number } }> {
  const samplesDir = mkdtempSync(join(tmpdir(), `aep-lanes-w${workers}-`));
  // A previous stack of this process left its lane endpoint in the environment.
  delete process.env[RELAY_VARIABLES.laneFunction];
  delete process.env[RELAY_VARIABLES.laneEndpoint];
  plan.log(`lanes round ${round}/${plan.repeats}: ${workers} delivering process${workers === 1 ? '' : 'es'} (${workers - 1} lane worker${workers === 2 ? '' : 's'}, at most ${workers} lane${workers === 1 ? '' : 's'} per batch); starting a stack`);
  const stack = await startStack({
    port: 0,
    inMemory: true,
    dataDir: join(samplesDir, 'data'),
    env: {
      AEP_LOCAL_POLL_MS: String(POLL_MS),
      AEP_LOCAL_LANE_WORKERS: String(workers - 1),
      AEP_FANOUT_MAX_LANES: String(workers),
      AEP_FANOUT_LANE_DELIVERIES: String(plan.laneDeliveries),
      // One tenant's session at the posting rate: the per-tenant bound per lane (for shards
      // shared with other tenants) would drop its info events past 5,000 deliveries.
      AEP_FANOUT_TENANT_DELIVERIES: '1000000',
      [STANDIN_VARIABLES.postMs]: String(plan.postMs),
      [STANDIN_VARIABLES.logDir]: samplesDir,
    },
  });
  const settings = { concurrency: stack.config.fanout.concurrency, tenantDeliveriesPerBatch: stack.config.fanout.tenantDeliveriesPerBatch };
  const client = createDynamoClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  const runs: LanesRun[] = [];
  try {
    const tenant = uniqueName('bench-lanes');
    const token = await createTenant(stack.dynamoEndpoint, tenant);
    const session = uniqueName('lanes');
    const context: BurstContext = { stack, token, session, workers, samples: new SampleFiles(samplesDir), seq: 0 };
    const sizes = [...plan.sizes].sort((a, b) => a - b);
    let seeded = 0;
    const seedTo = async (size: number) => {
      await seedSubscriptions(client, tenant, session, seeded, size);
      seeded = size;
    };
    // Warm-up (discarded): JIT, the lane workers' first invocations, DynamoDB Local's first queries.
    await seedTo(sizes[0] as number);
    await burst(context, sizes[0] as number, eventsFor(plan.deliveriesPerRun, sizes[0] as number) / 5);
    for (const size of sizes) {
      if (size > seeded) await seedTo(size);
      const run = { ...(await burst(context, size, eventsFor(plan.deliveriesPerRun, size))), repeat: round };
      runs.push(run);
      plan.log(
        `  W=${workers} S=${String(size).padStart(5)} round ${round}/${plan.repeats}: ${run.deliveries}/${run.expectedDeliveries} deliveries, ${run.deliveriesPerSecond.toFixed(0)}/s, first ${run.firstDeliveryMs.toFixed(0)} ms, p50 ${run.latency.p50.toFixed(0)} ms, p99 ${run.latency.p99.toFixed(0)} ms; ${run.fanoutInvocations} fan-out + ${run.laneInvocations} lane invocations; CPU ${run.cpuMs.stack.toFixed(0)} + ${run.cpuMs.laneWorkers.toFixed(0)} ms (${run.deliveriesPerCpuSecond.toFixed(0)} deliveries per CPU-s), DynamoDB Local ${run.cpuMs.dynamoDbLocal.toFixed(0)} ms, machine ${(run.cpuMs.machine / run.windowMs).toFixed(2)} cores busy; load ${run.loadBefore.toFixed(2)}`,
      );
    }
  } finally {
    client.destroy();
    await stack.stop();
    rmSync(samplesDir, { recursive: true, force: true });
  }
  return { runs, settings };
}

interface BurstContext {
  stack: RunningStack;
  token: string;
  session: string;
  workers: number;
  samples: SampleFiles;
  seq: number;
}

/** One timed burst: `events` POSTed at once to the session's `subscribers`. */
async function burst(context: BurstContext, subscribers: number, eventCount: number): Promise<LanesRun> {
  const { stack, samples } = context;
  const events = Math.max(1, Math.round(eventCount));
  const expected = events * subscribers;
  await settle(stack, 300, RUN_TIMEOUT_MS);
  samples.mark();
  stack.resetUsage();
  const loadBefore = loadavg()[0] ?? 0;
  const children = childProcesses(process.pid);
  const lanePids = children.filter((child) => child.cmdline.includes('lane-worker-process')).map((child) => child.pid);
  if (lanePids.length !== context.workers - 1) throw new Error(`expected ${context.workers - 1} lane worker processes, found ${lanePids.length}`);
  const jvmPids = children.filter((child) => child.comm === 'java').map((child) => child.pid);
  const cpuOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
  // The stack process's CPU window starts on a collected heap (bench/full-gc.ts): with it, its
  // CPU for the same burst at W = 4 moved by 7% between repeats, without it by half.
  const stackCpuMs = cpuWindowFromCollectedHeap();
  const lanesBefore = cpuOf(lanePids);
  const jvmBefore = cpuOf(jvmPids);
  const machineBefore = machineBusyMs();
  const emitMs = Math.round((performance.timeOrigin + performance.now()) * 100) / 100;
  const body = benchEvents(context.session, events, context.seq).map((event) => JSON.stringify({ ...event, data: { ...(event.data as Record<string, unknown>), benchEmitMs: emitMs } }));
  context.seq += events;
  await postEvents(stack.baseUrl, context.token, `${body.join('\n')}\n`, 'application/x-ndjson');
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (samples.poll() < expected) {
    if (Date.now() > deadline) throw new Error(`lanes run W=${context.workers} S=${subscribers}: ${samples.poll()} of ${expected} deliveries after ${RUN_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
  const windowMs = performance.timeOrigin + performance.now() - emitMs;
  const cpuMs = {
    stack: stackCpuMs(),
    laneWorkers: cpuOf(lanePids) - lanesBefore,
    dynamoDbLocal: cpuOf(jvmPids) - jvmBefore,
    machine: machineBusyMs() - machineBefore,
  };
  await settle(stack, 500, RUN_TIMEOUT_MS);
  samples.poll();
  const usage = stack.usage();
  const { all, byLabel } = samples.take();
  let lastDone = 0;
  let firstDone = Number.POSITIVE_INFINITY;
  const latencies = all.map(({ emitMs: emitted, doneMs }) => {
    lastDone = Math.max(lastDone, doneMs);
    firstDone = Math.min(firstDone, doneMs);
    return doneMs - emitted;
  });
  const { samples: _samples, ...latency } = distribution(latencies);
  return {
    workers: context.workers,
    subscribers,
    events,
    expectedDeliveries: expected,
    deliveries: all.length,
    deliveriesPerSecond: all.length / ((lastDone - emitMs) / 1000),
    firstDeliveryMs: firstDone - emitMs,
    latency,
    fanoutInvocations: usage.functions.fanout.invocations,
    laneInvocations: usage.functions.fanoutlane.invocations,
    laneFailures: usage.functions.fanoutlane.errors,
    deliveriesByProcess: byLabel,
    cpuMs,
    windowMs,
    deliveriesPerCpuSecond: all.length / (deliveringCpuMs({ cpuMs }) / 1000),
    loadBefore,
  };
}

/**
 * The session's subscriptions, connections `from` to `to`, as the live index entries the
 * subscribe path leaves once its replay handed off (`src/store/subscription-store.ts`, then
 * `parking-store.ts` flips `state` to live): the only items fan-out reads to deliver.
 */
async function seedSubscriptions(client: DynamoDBClient, tenant: string, session: string, from: number, to: number): Promise<void> {
  const filter = { session };
  if (!validateFilter(filter).ok) throw new Error('the seeded filter does not validate');
  const table = localTableNames('aep-local').connections;
  const expiresAt = String(expiresAfter(Date.now(), 3600 * 4));
  const requests: WriteRequest[] = [];
  for (let index = from; index < to; index += 1) {
    const connectionId = connectionIdOf(index);
    requests.push({
      PutRequest: {
        Item: {
          pk: { S: connectionKeys.sessionSubscriptions(tenant, session) },
          sk: { S: connectionKeys.subscriptionIndexSort(connectionId, SUBSCRIPTION_ID) },
          connectionId: { S: connectionId },
          subscriptionId: { S: SUBSCRIPTION_ID },
          filter: { S: JSON.stringify(filter) },
          state: { S: 'live' },
          expiresAt: { N: expiresAt },
        },
      },
    });
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

/**
 * The stand-in posters' sample files of one stack, read as they grow: `mark()` starts a run
 * (what the files hold so far is skipped), `poll()` reads what was appended since (whole lines
 * only) and answers the run's samples so far, `take()` parses them.
 */
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

  take(): { all: Array<{ emitMs: number; doneMs: number }>; byLabel: Record<string, number> } {
    const all: Array<{ emitMs: number; doneMs: number }> = [];
    const byLabel: Record<string, number> = {};
    for (const [name, list] of this.chunks) {
      const samples = parseSamples(list.join(''));
      const label = name.replace(/-\d+\.samples$/, '');
      byLabel[label] = (byLabel[label] ?? 0) + samples.length;
      for (const sample of samples) all.push(sample);
    }
    return { all, byLabel };
  }

  private files(): string[] {
    return readdirSync(this.dir).filter((name) => name.endsWith('.samples'));
  }
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
