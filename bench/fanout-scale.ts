/**
 * Fan-out at scale: one session, N WebSocket subscribers all matching it, PostToConnection
 * slowed to a simulated round trip (the local `@connections` endpoint's delay), a burst of
 * events POSTed at once. Reports deliveries per second, delivery latency (POST start to
 * receipt), fan-out invocations and the longest one against the function's timeout.
 *
 * Deliveries per second move with the host (the whole local stack is one Node process), so
 * each run also has yardsticks taken in the same run: a stand-in post loop (the same number of
 * posts, as many in flight as fan-out keeps, to the same connections through the same endpoint,
 * with nothing of the relay in between: no DynamoDB, no stream, no matching), for the rate, the
 * latency, the longest invocation and the CPU per delivery of this process (where fan-out, the
 * gateway and the `@connections` endpoint run): the stand-in's own CPU per delivery, in the same
 * process, in the same pair. Relay ÷ stand-in near 1 means the local stack, not the relay, is the
 * limit. (A fixed synchronous reference pipeline timed beside each run was tried first: its CPU
 * per event moved by up to 1.6× from pair to pair with what the rest of the machine was doing,
 * while the relay's deliveries per CPU-second held within about 15%; the stand-in runs the same
 * kind of asynchronous posting work under the same conditions, so it moves with them.)
 *
 * The subscribers live in a child process (`subscriber-process.ts`), so the stack's thread is
 * not also parsing thousands of sockets' frames.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { localTableNames } from '../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../local/local-credentials.ts';
import type { RunningStack } from '../local/stack.ts';
import { FANOUT_TIMEOUT_SECONDS } from '../src/config/function-timeouts.ts';
import { managementApiPoster } from '../src/gateway/connection-poster.ts';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { QuotaStore } from '../src/store/quota-store.ts';
import { createTenant, inKeyOrder, postEvents, uniqueName } from './clients.ts';
import { settle } from './cost.ts';
import { distribution, medianSummary } from './latency.ts';
import type { Distribution } from './latency.ts';
import type { SubscriberCommand, SubscriberReply } from './subscriber-process.ts';
import { benchEvents } from './workload.ts';
import { median } from './cpu-reference.ts';
import { cpuWindowFromCollectedHeap } from './full-gc.ts';

export interface FanoutScaleRun {
  postDelayMs: number;
  subscribers: number;
  events: number;
  expectedDeliveries: number;
  deliveries: number;
  /** Deliveries ÷ (last receipt − POST start). */
  deliveriesPerSecond: number;
  latency: Omit<Distribution, 'samples'>;
  fanoutInvocations: number;
  longestInvocationMs: number;
  /** The posts answered while the longest invocation ran (its deliveries); absent in results from before they were kept. */
  longestInvocationPosts?: number;
  timeoutMs: number;
  concurrency: number;
  /** CPU time of this process (user + system, ms) from the POST to the last receipt; absent in results from before the yardsticks. */
  processCpuMs?: number;
  /** Deliveries ÷ CPU-seconds of this process. */
  deliveriesPerCpuSecond?: number;
  /** The stand-in post loop's deliveries per second, same posts, same concurrency, same run. */
  standInPerSecond?: number;
  /** The stand-in loop's latency (its start to each receipt), for the relay's latency as a ratio to it; absent in results from before it was kept. */
  standInLatency?: { p50: number; p99: number };
  /**
   * The CPU yardstick: this process's CPU (ms) per delivery while the stand-in loop posted the
   * same number of deliveries (its start to the last receipt, from a collected heap, as the
   * relay's window); CPU per delivery is stated as a ratio to it. Absent in results from before.
   */
  standInCpuMsPerDelivery?: number;
  /**
   * How many relay/stand-in pairs the row was measured over (absent: one). Each timed field is
   * then the median over the pairs and `deliveries` the pairs' own count (they all deliver the
   * same); `pairs` keeps each pair's figures.
   */
  repeats?: number;
  pairs?: Array<Pick<FanoutScaleRun, 'deliveriesPerSecond' | 'standInPerSecond' | 'fanoutInvocations' | 'longestInvocationMs' | 'longestInvocationPosts' | 'processCpuMs' | 'standInCpuMsPerDelivery'> & { p50: number; p99: number; standInP50?: number; standInP99?: number }>;
}

type Pair = NonNullable<FanoutScaleRun['pairs']>[number];

/** One relay/stand-in pair's figures, as a row keeps each of its pairs. */
function pairOf(run: FanoutScaleRun): Pair {
  return {
    deliveriesPerSecond: run.deliveriesPerSecond,
    fanoutInvocations: run.fanoutInvocations,
    longestInvocationMs: run.longestInvocationMs,
    ...(run.longestInvocationPosts === undefined ? {} : { longestInvocationPosts: run.longestInvocationPosts }),
    p50: run.latency.p50,
    p99: run.latency.p99,
    ...(run.standInPerSecond === undefined ? {} : { standInPerSecond: run.standInPerSecond }),
    ...(run.standInLatency === undefined ? {} : { standInP50: run.standInLatency.p50, standInP99: run.standInLatency.p99 }),
    ...(run.processCpuMs === undefined ? {} : { processCpuMs: run.processCpuMs }),
    ...(run.standInCpuMsPerDelivery === undefined ? {} : { standInCpuMsPerDelivery: run.standInCpuMsPerDelivery }),
  };
}

export const geometricMean = (values: readonly number[]): number => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);

/**
 * A row's ratio to its stand-in: each pair's own ratio (relay and stand-in a few seconds apart),
 * combined over the pairs by their geometric mean; a row without pairs is its own one pair.
 * Taking the ratio inside each pair cancels the host's drift between pairs (this machine's
 * CPU per delivery moved by up to 1.6× from one pair to the next, relay and stand-in alike), and
 * the geometric mean weighs every pair, where the median of 3 kept one pair's ratio: a ratio of
 * the pairs' medians moved by up to 23% between two consecutive full runs, the geometric mean of
 * the same runs' pair ratios by at most 5%. Undefined where any pair lacks a figure.
 */
function pairRatio(run: FanoutScaleRun, ofPair: (pair: Pair, deliveries: number) => number | undefined, combine: (ratios: number[]) => number = geometricMean): number | undefined {
  const pairs = run.pairs !== undefined && run.pairs.length > 0 ? run.pairs : [pairOf(run)];
  const ratios = pairs.map((pair) => ofPair(pair, run.deliveries));
  if (ratios.some((ratio) => ratio === undefined || !(ratio > 0))) return undefined;
  return combine(ratios as number[]);
}

/** Relay deliveries/s ÷ the stand-in loop's, the figure that does not move with the host. */
export const standInRatio = (run: FanoutScaleRun): number | undefined => pairRatio(run, (pair) => (pair.standInPerSecond === undefined ? undefined : pair.deliveriesPerSecond / pair.standInPerSecond));

/**
 * The geometric mean of the ratios without the highest and the lowest (of three, the median; of
 * five, the middle three); fewer than three, all of them.
 */
export function middleGeometricMean(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return geometricMean(sorted.length >= 3 ? sorted.slice(1, -1) : sorted);
}

/**
 * The relay's latency p50 and p99 ÷ the stand-in loop's, same posts, same run: the geometric mean
 * of the pairs' ratios without the highest and the lowest. A burst's p50 is about half its
 * deliveries ÷ its rate times a shape factor, and a stall of the shared machine landing in the
 * first half of one side's burst moves that factor (and the pair's ratio) by up to 1.9× while the
 * whole burst's rate moves little: the geometric mean of five pairs followed such a pair (1,000
 * subscribers at 20 ms: 0.93× and 1.25× in two consecutive runs). The median of five does not,
 * but rests on one pair when the rest spread by a third (0.94-1.37× at 1,000 subscribers and
 * 50 ms: 1.27× and 1.09× in two consecutive runs); the middle three keep the median's guard
 * against one stalled pair and average the rest.
 */
export function standInLatencyRatio(run: FanoutScaleRun): { p50: number; p99: number } | undefined {
  const p50 = pairRatio(run, (pair) => (pair.standInP50 === undefined ? undefined : pair.p50 / pair.standInP50), middleGeometricMean);
  const p99 = pairRatio(run, (pair) => (pair.standInP99 === undefined ? undefined : pair.p99 / pair.standInP99), middleGeometricMean);
  return p50 === undefined || p99 === undefined ? undefined : { p50, p99 };
}

/** CPU per delivery of this process under the relay ÷ under the stand-in loop, same pair. */
export const cpuStandInRatio = (run: FanoutScaleRun): number | undefined =>
  run.deliveries === 0 ? undefined : pairRatio(run, (pair, deliveries) => (pair.processCpuMs === undefined || pair.standInCpuMsPerDelivery === undefined ? undefined : pair.processCpuMs / deliveries / pair.standInCpuMsPerDelivery));

/**
 * The longest fan-out invocation ÷ the stand-in loop's time to post that invocation's deliveries
 * (the posts answered while it ran), same pair. Against the whole run's deliveries the ratio
 * followed how the stream poller split the events into batches (one invocation carrying all of
 * them or half: 0.75× and 0.91× in two runs at 100 subscribers); per delivery of the invocation
 * it does not. Its records × the subscribers was no measure of its deliveries: a batch of one
 * record (a session's order-state wake-up) released a burst of 49 held events and 49,000 posts,
 * and the ratio read 53×. Undefined for results from before the posts were kept.
 */
export const longestToStandIn = (run: FanoutScaleRun): number | undefined =>
  pairRatio(run, (pair) =>
    pair.standInPerSecond === undefined || pair.longestInvocationPosts === undefined || pair.longestInvocationPosts === 0
      ? undefined
      : pair.longestInvocationMs / ((pair.longestInvocationPosts / pair.standInPerSecond) * 1000),
  );

class SubscriberProcess {
  private readonly child: ChildProcess;
  private pending: ((reply: SubscriberReply) => void) | undefined;

  constructor() {
    this.child = fork(fileURLToPath(new URL('./subscriber-process.ts', import.meta.url)), [], { execArgv: process.execArgv, stdio: 'inherit' });
    this.child.on('message', (reply: SubscriberReply) => this.pending?.(reply));
  }

  ask(command: SubscriberCommand): Promise<SubscriberReply> {
    return new Promise((resolve, reject) => {
      this.pending = (reply) => (reply.reply === 'error' ? reject(new Error(reply.message)) : resolve(reply));
      this.child.send(command);
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.send({ cmd: 'close' } satisfies SubscriberCommand);
    });
  }
}

export interface FanoutScalePlan {
  sizes: readonly number[];
  delaysMs: readonly number[];
  /** Events per run for a subscriber count (one NDJSON POST, at most 1,000). */
  eventsFor: (subscribers: number) => number;
  /** Relay/stand-in pairs per post time for a subscriber count, each row their medians. */
  repeatsFor: (subscribers: number) => number;
  log: (message: string) => void;
}

/**
 * One row from several relay/stand-in pairs: each of this machine's figures the median over the
 * pairs (the ratios are taken per pair, above, and kept in `pairs`). A pair
 * at 100 subscribers depends on how the stream poller happens to split its events into batches
 * (2 or 3 invocations, each waiting for the last), and any pair on a stall of the shared
 * machine; the median of the pairs follows neither.
 */
export function medianOfPairs(pairs: readonly FanoutScaleRun[]): FanoutScaleRun {
  const first = pairs[0] as FanoutScaleRun;
  if (pairs.length === 1) return first;
  const of = (pick: (run: FanoutScaleRun) => number | undefined): number | undefined => {
    const values = pairs.map(pick);
    return values.some((value) => value === undefined) ? undefined : median(values as number[]);
  };
  const must = (pick: (run: FanoutScaleRun) => number) => median(pairs.map(pick));
  const standInP50 = of((run) => run.standInLatency?.p50);
  const standInP99 = of((run) => run.standInLatency?.p99);
  const processCpuMs = of((run) => run.processCpuMs);
  const deliveriesPerCpuSecond = of((run) => run.deliveriesPerCpuSecond);
  const standInPerSecond = of((run) => run.standInPerSecond);
  const standInCpuMsPerDelivery = of((run) => run.standInCpuMsPerDelivery);
  const longestInvocationPosts = of((run) => run.longestInvocationPosts);
  return {
    ...first,
    deliveries: Math.min(...pairs.map((run) => run.deliveries)),
    deliveriesPerSecond: must((run) => run.deliveriesPerSecond),
    latency: medianSummary(pairs.map((run) => run.latency)),
    fanoutInvocations: must((run) => run.fanoutInvocations),
    longestInvocationMs: must((run) => run.longestInvocationMs),
    ...(longestInvocationPosts === undefined ? {} : { longestInvocationPosts }),
    ...(processCpuMs === undefined ? {} : { processCpuMs }),
    ...(deliveriesPerCpuSecond === undefined ? {} : { deliveriesPerCpuSecond }),
    ...(standInPerSecond === undefined ? {} : { standInPerSecond }),
    ...(standInP50 === undefined || standInP99 === undefined ? {} : { standInLatency: { p50: standInP50, p99: standInP99 } }),
    ...(standInCpuMsPerDelivery === undefined ? {} : { standInCpuMsPerDelivery }),
    repeats: pairs.length,
    pairs: pairs.map(pairOf),
  };
}

/**
 * The stand-in post loop: `events` × every open connection, posted through the real poster
 * (`managementApiPoster`, the one fan-out uses, same sockets and in-flight limit) to the
 * `@connections` endpoint at the current simulated delay, in fan-out's discipline: each
 * connection's events one after another, in order (inKeyOrder). Posting them in any order
 * instead made the yardstick faster than any relay may be where a connection's own posts are
 * the bound (100 subscribers × 200 events at 20 ms: 4 s of posts per connection), and its rate
 * there followed the host (7,104 and 8,866 deliveries/s in two runs beside the relay's steady
 * 3,949 and 3,836). The subscribers time the receipts. Its CPU window is the relay's: from a
 * collected heap, its start to the last receipt.
 */
async function standInPostRate(stack: RunningStack, subscribers: SubscriberProcess, events: ReadonlyArray<Record<string, unknown>>, size: number): Promise<{ perSecond: number; latency: { p50: number; p99: number }; cpuMsPerDelivery: number }> {
  const concurrency = stack.config.fanout.concurrency;
  const poster = managementApiPoster({ endpoint: stack.managementEndpoint, region: stack.config.region, maxSockets: concurrency, credentials: stack.managementCredentials });
  const connections = stack.connectionIds();
  const texts = events.map((event) => JSON.stringify(event));
  const queues = new Map(connections.map((connectionId) => [connectionId, texts]));
  // The collection first, then the clock (as for the relay, below): a full collection of this
  // process's heap takes up to a few hundred ms, which were counted in the rate and every latency.
  const cpuMs = cpuWindowFromCollectedHeap();
  const sentAt: Record<string, number> = {};
  const startedAt = performance.timeOrigin + performance.now();
  for (const event of events) sentAt[event.id as string] = startedAt;
  await inKeyOrder(queues, concurrency, async (connectionId, text) => {
    await poster.post(connectionId, text);
  });
  const reply = await subscribers.ask({ cmd: 'collect', sentAt, expected: events.length * size, timeoutMs: 300_000 });
  if (reply.reply !== 'collected') throw new Error('subscriber process answered out of turn');
  const standInCpuMs = cpuMs();
  await settle(stack, 500, 300_000);
  const { p50, p99 } = distribution(reply.latenciesMs);
  return { perSecond: reply.received / ((reply.lastAt - startedAt) / 1000), latency: { p50, p99 }, cpuMsPerDelivery: standInCpuMs / reply.received };
}

export async function runFanoutScale(stack: RunningStack, plan: FanoutScalePlan): Promise<FanoutScaleRun[]> {
  const tenant = uniqueName('bench-scale');
  const token = await createTenant(stack.dynamoEndpoint, tenant);
  const client = createDynamoClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  const names = localTableNames('aep-local');
  // The default quota is 1,000 open connections per tenant.
  await new QuotaStore(client, { tenantsTable: names.tenants, connectionsTable: names.connections, now: Date.now, cacheMs: 0 }).setQuotas(tenant, { maxConnections: Math.max(...plan.sizes) + 10 });
  client.destroy();
  const session = uniqueName('fanout');
  const subscribers = new SubscriberProcess();
  const runs: FanoutScaleRun[] = [];
  let open = 0;
  let seq = 0;
  /** One relay burst then the stand-in loop's, the same events' count and subscribers. */
  const measurePair = async (size: number, delayMs: number): Promise<FanoutScaleRun> => {
    const count = plan.eventsFor(size);
    const events = benchEvents(session, count, seq);
    seq += count;
    const texts = events.map((event) => JSON.stringify(event));
    stack.resetUsage();
    // The heap collected before the clock starts: the collection's pause is not the relay's.
    const cpuMs = cpuWindowFromCollectedHeap();
    const sentAt: Record<string, number> = {};
    const startedAt = performance.timeOrigin + performance.now();
    for (const event of events) sentAt[event.id as string] = startedAt;
    await postEvents(stack.baseUrl, token, texts.join('\n') + '\n', 'application/x-ndjson');
    const expected = count * size;
    const reply = await subscribers.ask({ cmd: 'collect', sentAt, expected, timeoutMs: 300_000 });
    if (reply.reply !== 'collected') throw new Error('subscriber process answered out of turn');
    const processCpuMs = cpuMs();
    await settle(stack, 500, 300_000);
    const usage = stack.usage();
    const standIn = await standInPostRate(stack, subscribers, benchEvents(session, count, seq), size);
    const standInPerSecond = standIn.perSecond;
    seq += count;
    const { samples: _samples, ...latency } = distribution(reply.latenciesMs);
    const run: FanoutScaleRun = {
      postDelayMs: delayMs,
      subscribers: size,
      events: count,
      expectedDeliveries: expected,
      deliveries: reply.received,
      deliveriesPerSecond: reply.received / ((reply.lastAt - startedAt) / 1000),
      latency,
      fanoutInvocations: usage.functions.fanout.invocations,
      longestInvocationMs: usage.functions.fanout.maxDurationMs,
      longestInvocationPosts: usage.fanoutLongestInvocationPosts,
      timeoutMs: FANOUT_TIMEOUT_SECONDS * 1000,
      concurrency: stack.config.fanout.concurrency,
      processCpuMs,
      deliveriesPerCpuSecond: reply.received / (processCpuMs / 1000),
      standInPerSecond,
      standInLatency: standIn.latency,
      standInCpuMsPerDelivery: standIn.cpuMsPerDelivery,
    };
    return run;
  };
  try {
    for (const size of [...plan.sizes].sort((a, b) => a - b)) {
      plan.log(`  opening subscribers ${open} -> ${size}`);
      await subscribers.ask({ cmd: 'open', baseUrl: stack.baseUrl, token, session, count: size - open });
      open = size;
      await settle(stack, 500, 300_000);
      // A discarded pair first: the first burst to connections the subscriber process just opened
      // ran slow on one side or the other (its pair the lowest or highest ratio of the five in 4
      // of 5 full runs), which is the opening's cost, not the relay's or the stand-in's.
      stack.setPostDelayMs(plan.delaysMs[0] ?? 0);
      const warmUp = await measurePair(size, plan.delaysMs[0] ?? 0);
      plan.log(`  ${String(size).padStart(5)} subscribers: warm-up pair discarded (${warmUp.deliveries}/${warmUp.expectedDeliveries} deliveries)`);
      for (const delayMs of plan.delaysMs) {
        stack.setPostDelayMs(delayMs);
        const pairs: FanoutScaleRun[] = [];
        const repeats = plan.repeatsFor(size);
        for (let repeat = 0; repeat < repeats; repeat += 1) {
          const run = await measurePair(size, delayMs);
          pairs.push(run);
          plan.log(
            `  ${String(size).padStart(5)} subscribers, ${delayMs} ms posts: ${run.deliveries}/${run.expectedDeliveries} deliveries, ${run.deliveriesPerSecond.toFixed(0)}/s (${(standInRatio(run) ?? Number.NaN).toFixed(2)}× the stand-in loop's ${(run.standInPerSecond ?? Number.NaN).toFixed(0)}/s; CPU per delivery ${(cpuStandInRatio(run) ?? Number.NaN).toFixed(2)}× the stand-in's, ${(run.deliveriesPerCpuSecond ?? 0).toFixed(0)} per CPU-second), p50 ${run.latency.p50.toFixed(0)} ms, p99 ${run.latency.p99.toFixed(0)} ms (${(standInLatencyRatio(run)?.p50 ?? Number.NaN).toFixed(2)}× / ${(standInLatencyRatio(run)?.p99 ?? Number.NaN).toFixed(2)}× the stand-in's), ${run.fanoutInvocations} invocations, longest ${(run.longestInvocationMs / 1000).toFixed(1)} s${repeats > 1 ? ` (pair ${repeat + 1}/${repeats})` : ''}`,
          );
        }
        runs.push(medianOfPairs(pairs));
      }
    }
  } finally {
    stack.setPostDelayMs(0);
    await subscribers.stop();
    await settle(stack, 500, 300_000).catch(() => undefined);
  }
  return runs;
}
