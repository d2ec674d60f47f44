/**
 * The "Fan-out lanes at scale" section of BENCHMARKS.md: the lanes stage's measured runs
 * (`fanout-lanes.ts`), the median over each (W, S)'s repeats (`lanes-repeats.ts`), each timed
 * figure as a ratio to one delivering process at the same size in the same stage run (median ÷
 * median), and the AWS model derived from the median CPU per delivery.
 *
 * The model (`lanesModel`, pure), for one tenant's session of S subscribers fed λ events/s:
 * - deliveries/s = S × λ; posts in flight = deliveries/s × post latency (Little's law);
 * - one post at a time per connection (its order), so each connection is busy λ × post latency
 *   of the time: at 1 or more no number of lanes keeps up;
 * - a lane carries min(posts in flight per lane ÷ post latency, its vCPU share ÷ CPU per
 *   delivery); lanes = deliveries/s ÷ that, doubled to keep each lane half busy;
 * - the batch barrier: a batch holds the events stored while the previous one ran, so its
 *   duration D solves D = F + λ·D·max(post latency, S ÷ (lanes × rate per lane)), i.e.
 *   D = F ÷ (1 − u) with u the busier of connection and lane; an event waits up to D for its
 *   batch and then up to D within it: p99 ≈ 2D;
 * - cost per million deliveries: the lanes' GB-seconds while posting, the lane invocations
 *   (lanes − 1 per batch; lane 0 runs in the fan-out invocation) and the WebSocket messages.
 */
import type { LanesRun, LanesStageResult } from './fanout-lanes.ts';
import { LAMBDA_INVOKE_URL, LAMBDA_SYNC_PAYLOAD_BYTES, laneWorkBytes } from './lane-work-size.ts';
import { deliveringCpuMs, groupRepeats, meanOf, medianOf, pooledDeliveriesPerCpuSecond, repeatsOf } from './lanes-repeats.ts';
import type { LanesGroup } from './lanes-repeats.ts';
import { LANE_PAYLOAD_BYTES } from '../src/relay/fanout/delivery-lanes.ts';
import { MEMORY_MB, PRICES } from './prices.ts';
import { dollars, fixed, grouped, table } from './report-format.ts';

/** Lambda gives a function one vCPU at 1,769 MB, and CPU in proportion to memory (Lambda Developer Guide, "Configure Lambda function memory"). */
export const MB_PER_VCPU = 1769;
/** API Gateway's throttle per account and Region across REST, HTTP, WebSocket and WebSocket callback (`@connections`) APIs; adjustable. */
export const API_GATEWAY_ACCOUNT_RPS = 10_000;
export const API_GATEWAY_QUOTAS_URL = 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html';
export const LAMBDA_MEMORY_URL = 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html';
/** Records per fan-out batch at most (`FANOUT_BATCH_SIZE`, infra/constructs/fanout.ts). */
export const MAX_RECORDS_PER_BATCH = 100;
/** `-c fanoutLanes` / AEP_FANOUT_MAX_LANES when not set (src/config/relay-config.ts). */
export const DEFAULT_MAX_LANES = 8;

/** The issue's target: 10,000 subscribers of one tenant, a 50 events/s stream, p99 under 1 s. */
export const TARGET = { subscribers: 10_000, eventsPerSecond: 50, p99Ms: 1000 } as const;

export interface LaneModelInputs {
  subscribers: number;
  eventsPerSecond: number;
  postMs: number;
  /** Posts in flight per lane (`AEP_FANOUT_CONCURRENCY`). */
  postsPerLane: number;
  laneMemoryMb: number;
  /** CPU time per delivery (ms) on one full core, measured. */
  cpuMsPerDelivery: number;
  /** Time per batch that is not posting (ms): the stream's hand-off, ordering, the subscription read, the lane invocations. Assumed. */
  batchFixedMs: number;
}

export interface LaneModel {
  deliveriesPerSecond: number;
  postsInFlight: number;
  /** Share of the time each connection has a post in flight (one at a time, for its order). */
  connectionBusy: number;
  laneVcpu: number;
  latencyBoundPerLane: number;
  cpuBoundPerLane: number;
  ratePerLane: number;
  /** Lanes that carry the rate with every lane fully busy. */
  lanesToCarry: number;
  /** Lanes that keep each one half busy (what the batch and p99 rows assume). */
  lanes: number;
  /** Whether the stream can be kept up with at all (each connection less than fully busy). */
  sustainable: boolean;
  /** Steady batch duration (ms); the 100-record batch's when not sustainable. */
  batchMs: number;
  recordsPerBatch: number;
  /** Infinity when not sustainable (the backlog grows). */
  p99Ms: number;
  /** The lane Lambda's GB-seconds per million deliveries (posting time at its rate). */
  laneGbSecondsPerMillion: number;
  laneInvocationsPerMillion: number;
  dollarsPerMillion: { laneDuration: number; laneRequests: number; websocketMessages: number; total: number };
  /** `@connections` requests per second against the account's throttle. */
  apiGatewayRps: number;
  apiGatewayQuotaMultiple: number;
}

export function lanesModel(inputs: LaneModelInputs): LaneModel {
  const postSeconds = inputs.postMs / 1000;
  const deliveriesPerSecond = inputs.subscribers * inputs.eventsPerSecond;
  const postsInFlight = deliveriesPerSecond * postSeconds;
  const connectionBusy = inputs.eventsPerSecond * postSeconds;
  const laneVcpu = inputs.laneMemoryMb / MB_PER_VCPU;
  const latencyBoundPerLane = inputs.postsPerLane / postSeconds;
  const cpuBoundPerLane = inputs.cpuMsPerDelivery > 0 ? laneVcpu / (inputs.cpuMsPerDelivery / 1000) : Number.POSITIVE_INFINITY;
  const ratePerLane = Math.min(latencyBoundPerLane, cpuBoundPerLane);
  const lanesToCarry = Math.ceil(deliveriesPerSecond / ratePerLane);
  const lanes = 2 * lanesToCarry;
  const laneBusy = deliveriesPerSecond / (lanes * ratePerLane);
  const busy = Math.max(connectionBusy, laneBusy);
  const fixedSeconds = inputs.batchFixedMs / 1000;
  let batchSeconds = busy < 1 ? fixedSeconds / (1 - busy) : Number.POSITIVE_INFINITY;
  let recordsPerBatch = inputs.eventsPerSecond * batchSeconds;
  let sustainable = busy < 1;
  if (!(recordsPerBatch <= MAX_RECORDS_PER_BATCH)) {
    // Batches at their cap: each takes F + 100 × the busier per-record time; kept up with only
    // if 100 records per batch come out at least as fast as they are stored.
    recordsPerBatch = MAX_RECORDS_PER_BATCH;
    batchSeconds = fixedSeconds + (MAX_RECORDS_PER_BATCH * busy) / inputs.eventsPerSecond;
    sustainable = sustainable && MAX_RECORDS_PER_BATCH / batchSeconds >= inputs.eventsPerSecond;
  }
  const deliveriesPerBatch = recordsPerBatch * inputs.subscribers;
  const laneGbSecondsPerMillion = (1e6 / ratePerLane) * (inputs.laneMemoryMb / 1024);
  const laneInvocationsPerMillion = ((lanes - 1) * 1e6) / deliveriesPerBatch;
  const laneDuration = laneGbSecondsPerMillion * PRICES.lambdaArmGbSecond.usd;
  const laneRequests = (laneInvocationsPerMillion * PRICES.lambdaRequest.usd) / 1e6;
  const websocketMessages = PRICES.websocketMessage.usd;
  return {
    deliveriesPerSecond,
    postsInFlight,
    connectionBusy,
    laneVcpu,
    latencyBoundPerLane,
    cpuBoundPerLane,
    ratePerLane,
    lanesToCarry,
    lanes,
    sustainable,
    batchMs: batchSeconds * 1000,
    recordsPerBatch,
    p99Ms: sustainable ? 2 * batchSeconds * 1000 : Number.POSITIVE_INFINITY,
    laneGbSecondsPerMillion,
    laneInvocationsPerMillion,
    dollarsPerMillion: { laneDuration, laneRequests, websocketMessages, total: laneDuration + laneRequests + websocketMessages },
    apiGatewayRps: deliveriesPerSecond,
    apiGatewayQuotaMultiple: deliveriesPerSecond / API_GATEWAY_ACCOUNT_RPS,
  };
}

/**
 * The rate a run would reach if, from its first delivery on, every delivering process kept
 * `concurrency` posts in flight, bounded by each connection's own posts one after another
 * (events × post latency): deliveries ÷ (first delivery + max(deliveries ÷ (W × concurrency ÷
 * post latency), events × post latency)). What is left between it and the run is the batch
 * barrier (a second batch waits for the first), lanes that end unevenly, and CPU.
 */
export function postingBound(run: LanesRun, settings: Pick<LanesStageResult['settings'], 'concurrency' | 'postMs'>): number {
  const postSeconds = settings.postMs / 1000;
  const posting = Math.max(run.deliveries / ((run.workers * settings.concurrency) / postSeconds), run.events * postSeconds);
  return run.deliveries / (run.firstDeliveryMs / 1000 + posting);
}

/** CPU per delivery of a run (ms): the delivering processes' CPU ÷ its deliveries. */
export const cpuMsPerDelivery = (run: LanesRun) => deliveringCpuMs(run) / Math.max(1, run.deliveries);

/** The run the model takes its CPU per delivery from: the most subscribers, then the most workers (the target's shape, lane hand-off included). */
export function modelRun(runs: readonly LanesRun[]): LanesRun | undefined {
  return [...runs].sort((a, b) => b.subscribers - a.subscribers || b.workers - a.workers)[0];
}

/**
 * A figure of `run`'s W and S, taken `over` its repeats in `runs` (a run without repeats is its
 * own), ÷ the same of one delivering process (W = 1) at the same size, same stage run; undefined
 * without that yardstick.
 */
function toOneOver(runs: readonly LanesRun[], run: LanesRun, over: (repeats: readonly LanesRun[]) => number): number | undefined {
  const ones = repeatsOf(runs, 1, run.subscribers);
  if (ones.length === 0) return undefined;
  const yardstick = over(ones);
  const own = repeatsOf(runs, run.workers, run.subscribers);
  const value = over(own.length === 0 ? [run] : own);
  return yardstick > 0 && Number.isFinite(yardstick) ? value / yardstick : undefined;
}

/** A figure at `run`'s W and S ÷ the same figure at W = 1, each the median over its repeats. */
export const toOne = (runs: readonly LanesRun[], run: LanesRun, figure: (run: LanesRun) => number) => toOneOver(runs, run, (repeats) => medianOf(repeats, figure));

/** Deliveries per CPU-second at `run`'s W and S ÷ those at W = 1, each over all its repeats together (`pooledDeliveriesPerCpuSecond`). */
export const pooledToOne = (runs: readonly LanesRun[], run: LanesRun) => toOneOver(runs, run, pooledDeliveriesPerCpuSecond);

/** Deliveries/s of `run` ÷ those of one delivering process at the same size; undefined without that yardstick. */
export const ratioToOne = (runs: readonly LanesRun[], run: LanesRun) => toOne(runs, run, (one) => one.deliveriesPerSecond);

/** A latency at `run`'s W and S ÷ the same at W = 1, each the mean over its repeats. */
const latencyToOne = (runs: readonly LanesRun[], run: LanesRun, figure: (run: LanesRun) => number) =>
  toOneOver(runs, run, (repeats) => meanOf(repeats, figure));

/**
 * The timed figures at a run's W and S ÷ the same at W = 1 and S (same stage run): deliveries/s
 * median ÷ median, deliveries per CPU-second each over its repeats' totals (`pooledToOne`), and
 * latency mean ÷ mean. A burst's p50 with several lanes on this 2-core machine falls near one of
 * two values a third apart (5,000 subscribers, W = 4: 1.5-1.8 s or 2.2-2.4 s, as the processes
 * happened to share the cores), so the median of seven picked a side (0.38× and 0.46× in two
 * consecutive runs); the mean weighs both sides as often as they came. Not the first delivery:
 * one time sample per burst, set mostly by where the POST falls in the stream poll, not by W, so
 * a ratio of it moved by more than half between two runs.
 */
export function lanesRatios(runs: readonly LanesRun[], run: LanesRun) {
  return {
    deliveriesPerSecond: ratioToOne(runs, run),
    p50: latencyToOne(runs, run, (one) => one.latency.p50),
    p99: latencyToOne(runs, run, (one) => one.latency.p99),
    deliveriesPerCpuSecond: pooledToOne(runs, run),
  };
}

/** Assumed time per batch that is not posting, in AWS (see the model rows). */
export const ASSUMED_BATCH_FIXED_MS = 200;

const ms = (value: number) => (Number.isFinite(value) ? `${grouped(value)} ms` : 'unbounded');
/** Dollars, with two significant digits below a hundredth of a cent (where `dollars` shows $0.0000). */
const usd = (value: number) => (value > 0 && value < 0.0001 ? `$${value.toPrecision(2)}` : dollars(value));
const range = (low: number, high: number) => (fixed(low) === fixed(high) ? `${fixed(low)}×` : `${fixed(low)}× to ${fixed(high)}×`);
const us = (msValue: number) => `${fixed(msValue * 1000, 1)} µs`;

export function lanesMarkdown(result: LanesStageResult | undefined): string[] {
  if (result === undefined || result.runs.length === 0) return [];
  const { settings, runs } = result;
  const groups = groupRepeats(runs);
  const medians = groups.map((group) => group.median);
  const sizes = [...new Set(runs.map((run) => run.subscribers))].sort((a, b) => a - b);
  // Results saved before the stage repeated its bursts hold one run per (W, S).
  const repeats = settings.repeats ?? Math.max(...groups.map((group) => group.repeats.length));
  const cores = result.machineCores;
  const busyCores = (run: LanesRun) => run.cpuMs.machine / run.windowMs;
  const lines: string[] = [
    '## Fan-out lanes at scale',
    '',
    `\`npm run bench -- --only lanes\` (\`bench/fanout-lanes.ts\`), ${result.date.slice(0, 16).replace('T', ' ')} UTC, commit \`${result.commit.slice(0, 7)}\`, ${grouped(result.durationSeconds)} s. One tenant's session with S subscribers, a burst of events POSTed at once (${grouped(settings.deliveriesPerRun)} deliveries per burst at every S, so runs compare), delivered by W processes: W = 1 is the fan-out invocation alone (\`AEP_FANOUT_MAX_LANES=1\`, no lane workers); W = 2 and 4 add W − 1 lane worker processes (\`AEP_LOCAL_LANE_WORKERS\`) with at most W lanes per batch. \`AEP_FANOUT_LANE_DELIVERIES=${settings.laneDeliveries}\`, so every batch of every run (at least ${grouped(Math.min(...sizes))} deliveries) splits into W lanes; ${settings.concurrency} posts in flight per lane (\`AEP_FANOUT_CONCURRENCY\`). ${settings.rounds === true ? `The stage runs in ${repeats} rounds: each round runs every W once (their order rotated round to round), each on a fresh stack that runs a discarded warm-up burst, then one burst per S, smallest first, so a W and its W = 1 yardstick are minutes apart (run one W after another, seven bursts per S on one stack, W = 1's CPU per burst drifted up by a third to a half over its bursts and deliveries per CPU-second ÷ W = 1 moved by a third between two full runs);` : 'Each stack is fresh (one per W) and runs a discarded warm-up burst first;'} each burst's CPU window starts on a collected heap of the stack's process (\`bench/full-gc.ts\`: a major collection of the bench process's heap landing inside one window or not had moved one burst's CPU by half). ${repeats > 1 ? `Each (W, S) burst ran ${repeats} times${settings.rounds === true ? ', once a round,' : ' in a row on its stack,'} and **every figure below is the median over the ${repeats} repeats** (CPU: the mean per burst; the p50 / p99 ratios: mean ÷ mean, since a burst's latency with several lanes falls near one of two values a third apart and a median of ${repeats} picks one; each repeat's own figures are in \`bench/results.json\`, \`fanoutLanes.runs\`): one burst's first delivery and p50/p99 moved by more than 15% from one stage run to the next. This machine's deliveries/s give the lowest and highest repeat in brackets.` : 'One burst per (W, S) (results taken before the stage repeated its bursts).'}`,
    '',
    `Posts go to a stand-in (\`local/stand-in-poster.ts\`): ${settings.postMs} ms of simulated round trip, then \`sent\` and the completion time recorded. Real sockets by the thousand would make the local gateway's one process the limit at every W; the stand-in also leaves out a real post's own CPU (request signing, the HTTPS write), so CPU per delivery here is the relay's share of it. The subscriptions are written straight into the connections table as live index entries, before the timed window. Latency runs from the POST's start to each post's completion; deliveries/s = deliveries ÷ (last completion − POST start). CPU is user + system time from the POST until the last delivery was read back, of the delivering processes (the stack's own process, where fan-out, the HTTP ingest and the stream pollers run, and the lane workers), of DynamoDB Local, and of the whole machine (this machine's ${cores} cores, shared with other work). The posting bound is the rate the run would reach if, from its first delivery on, each of the W processes kept ${settings.concurrency} posts in flight, no connection faster than its own posts one after another (events × ${settings.postMs} ms): deliveries ÷ (first delivery + the longer of the two). **The yardstick of every timed figure is W = 1 at the same S in the same stage run**: deliveries/s, p50/p99 and deliveries per CPU-second are stated ÷ that run's (${repeats > 1 ? 'the median at W ÷ the median at W = 1, p50/p99 the mean ÷ the mean; deliveries per CPU-second over all the repeats together, their deliveries ÷ their CPU, at W ÷ at W = 1, because one burst holds about a second of CPU, counted in 10 ms ticks across up to 4 processes, and a median of per-burst rates kept one burst\'s noise (15% between two runs); ' : ''}so W = 1 reads 1×); the columns marked "this machine" are the absolute values and CPU counts of this run, beside. The first delivery is not stated as a ratio: it is one moment per burst, set mostly by where the POST falls in the ${settings.pollMs} ms stream poll rather than by W, so a ratio of it says nothing about the lanes (it moved by more than half from one run to the next); its ${repeats > 1 ? 'median' : 'value'} is this machine's, and feeds the posting bound.`,
    '',
    table(
      ['subscribers', 'W', 'events', 'deliveries per burst', '**deliveries / s ÷ W = 1**', 'of the posting bound', '**p50 / p99 ÷ W = 1**', '**deliveries per CPU-second ÷ W = 1**', repeats > 1 ? 'this machine: deliveries / s (lowest–highest repeat)' : 'this machine: deliveries / s', 'this machine: posting bound', 'this machine: first delivery', 'this machine: p50 / p99', 'this machine: deliveries per CPU-second', 'fan-out / lane invocations', 'this machine: CPU ms, stack + lane workers', 'this machine: DynamoDB Local CPU', 'machine busy', '1-min load before'],
      groups.map((group) => {
        const run = group.median;
        const ratios = lanesRatios(runs, run);
        const times = (value: number | undefined) => (value === undefined ? '–' : `**${fixed(value)}×**`);
        const bound = postingBound(run, settings);
        const failures = run.laneFailures > 0 ? ` (${run.laneFailures} failed)` : '';
        return [
          grouped(run.subscribers),
          String(run.workers),
          String(run.events),
          `${span(group, (one) => one.deliveries, grouped)} / ${grouped(run.expectedDeliveries)}`,
          times(ratios.deliveriesPerSecond),
          `${fixed((100 * run.deliveriesPerSecond) / bound, 0)}%`,
          ratios.p50 === undefined || ratios.p99 === undefined ? '–' : `**${fixed(ratios.p50)}× / ${fixed(ratios.p99)}×**`,
          times(run.deliveriesPerSecond > 0 ? ratios.deliveriesPerCpuSecond : undefined),
          `${grouped(run.deliveriesPerSecond)}${group.repeats.length > 1 ? ` (${span(group, (one) => one.deliveriesPerSecond, grouped, true)})` : ''}`,
          grouped(bound),
          ms(run.firstDeliveryMs),
          `${ms(run.latency.p50)} / ${ms(run.latency.p99)}`,
          grouped(run.deliveriesPerSecond > 0 ? run.deliveriesPerCpuSecond : 0),
          `${span(group, (one) => one.fanoutInvocations, String)} / ${span(group, (one) => one.laneInvocations, String)}${failures}`,
          `${grouped(run.cpuMs.stack)} + ${grouped(run.cpuMs.laneWorkers)}`,
          `${grouped(run.cpuMs.dynamoDbLocal)} ms`,
          `${fixed(busyCores(run))} of ${cores} cores`,
          span(group, (one) => one.loadBefore, (value) => fixed(value)),
        ];
      }),
    ),
    '',
  ];
  lines.push(...scalingFindings(runs, medians, settings, cores), '');
  lines.push(...awsModelLines(result, medians, repeats));
  return lines;
}

/**
 * A count or figure over a group's repeats as they were: the one value when they agree, else
 * the lowest to the highest (`always`: a range even when they agree).
 */
function span(group: LanesGroup, figure: (run: LanesRun) => number, format: (value: number) => string, always = false): string {
  const values = group.repeats.map(figure);
  const [low, high] = [format(Math.min(...values)), format(Math.max(...values))];
  return low === high && !always ? low : `${low}–${high}`;
}

/** What the measured runs say about scaling, each sentence chosen by the figures it states: the medians over the repeats, ratios median ÷ median. */
function scalingFindings(runs: readonly LanesRun[], medians: readonly LanesRun[], settings: LanesStageResult['settings'], cores: number): string[] {
  const most = Math.max(...medians.map((run) => run.workers));
  const widest = medians.filter((run) => run.workers === most);
  const ones = medians.filter((run) => run.workers === 1);
  const ratios = widest.map((run) => ratioToOne(runs, run)).filter((ratio): ratio is number => ratio !== undefined);
  if (ratios.length === 0 || most === 1) return [];
  const ofBound = (set: readonly LanesRun[]) => set.map((run) => (100 * run.deliveriesPerSecond) / postingBound(run, settings));
  const percentRange = (values: readonly number[]) => {
    const [low, high] = [Math.min(...values), Math.max(...values)];
    return fixed(low, 0) === fixed(high, 0) ? `${fixed(low, 0)}%` : `${fixed(low, 0)}–${fixed(high, 0)}%`;
  };
  const cpuPerDelivery = (set: readonly LanesRun[]) => set.reduce((sum, run) => sum + cpuMsPerDelivery(run), 0) / Math.max(1, set.length);
  const busiest = Math.max(...widest.map((run) => run.cpuMs.machine / run.windowMs));
  const share = (set: readonly LanesRun[], cpu: (run: LanesRun) => number) => Math.max(...set.map((run) => cpu(run) / run.windowMs));
  const postSeconds = settings.postMs / 1000;
  const perProcess = settings.concurrency / postSeconds;
  // Runs whose connections' own posts (events × post latency) take about as long as the lanes' posting.
  const chained = widest.filter((run) => run.events * postSeconds >= 0.9 * (run.deliveries / (run.workers * perProcess)));
  const firsts = medians.map((run) => run.firstDeliveryMs);
  return [
    `**Scaling.** ${most} delivering processes reached ${range(Math.min(...ratios), Math.max(...ratios))} the deliveries/s of one (same S, same stage run; the issue's goal is 3×). One process posts at most ${grouped(perProcess)} deliveries/s (${settings.concurrency} in flight at ${settings.postMs} ms), ${most} at most ${grouped(most * perProcess)}. Every (W, S) reached ${percentRange([...ofBound(ones), ...ofBound(widest)])} of its posting bound (${percentRange(ofBound(ones))} with W = 1, ${percentRange(ofBound(widest))} with W = ${most}): the posting itself grows with the processes. What keeps the ratio under ${most} is the time before the first delivery (this machine: ${grouped(Math.min(...firsts))}–${grouped(Math.max(...firsts))} ms: the POST, the ${settings.pollMs} ms stream poll, ordering, reading S subscriptions, planning and the lane hand-off), the same whatever W and a larger share of a shorter run${chained.length === 0 ? '' : `, and at ${chained.map((run) => grouped(run.subscribers)).join(', ')} subscribers each connection's own posts one after another (${chained.map((run) => `${run.events} events × ${settings.postMs} ms = ${grouped(run.events * settings.postMs)} ms`).join(', ')}), as long as the lanes' posting`}; below the bound, a run split into several batches (the fan-out invocations column) starts each only when the one before has ended (the batch barrier) and the lanes end unevenly.`,
    '',
    `CPU per delivery of the delivering processes, this machine's: ${us(cpuPerDelivery(ones))} with W = 1 and ${us(cpuPerDelivery(widest))} with W = ${most}, averaged over the sizes; the latter includes the lane hand-off (encoding each lane's work, the Invoke request, decoding it in the worker), and the stack process's standing work (the two stream pollers) runs for a shorter window. ` +
      (busiest >= 0.85 * cores
        ? `With W = ${most} the machine's ${cores} cores were up to ${fixed(busiest)} busy, of which the delivering processes ${fixed(share(widest, deliveringCpuMs))} and DynamoDB Local ${fixed(share(widest, (run) => run.cpuMs.dynamoDbLocal))} at most: the rest was other work on the machine. On contended cores a process does not get a core the moment it needs one, which shows as a lower share of the posting bound${share(widest, deliveringCpuMs) < 0.5 * cores ? `; the delivering processes' own CPU (at most ${fixed(share(widest, deliveringCpuMs))} of ${cores} cores) was not the limit` : ''}.`
        : `With W = ${most} the machine's ${cores} cores were at most ${fixed(busiest)} busy during the runs (other work on the machine included), so the cores were not the limit.`),
  ];
}

function awsModelLines(result: LanesStageResult, medians: readonly LanesRun[], repeats: number): string[] {
  const run = modelRun(medians);
  if (run === undefined) return [];
  const cpu = cpuMsPerDelivery(run);
  const memory = MEMORY_MB.fanoutlane;
  const base = { subscribers: TARGET.subscribers, eventsPerSecond: TARGET.eventsPerSecond, postsPerLane: result.settings.concurrency, laneMemoryMb: memory, cpuMsPerDelivery: cpu, batchFixedMs: ASSUMED_BATCH_FIXED_MS };
  // One lane's Invoke payload, as the relay encodes it (`encodeLaneWork` of the bench's events).
  const laneWork = (model: LaneModel) => laneWorkBytes(Math.ceil(model.recordsPerBatch), Math.ceil(TARGET.subscribers / model.lanes));
  const fullBatchAtDefault = laneWorkBytes(MAX_RECORDS_PER_BATCH, Math.ceil(TARGET.subscribers / DEFAULT_MAX_LANES));
  const mb = (bytes: number) => `${fixed(bytes / 1e6, 2)} MB`;
  const columns = [20, 10].map((postMs) => ({ postMs, model: lanesModel({ ...base, postMs }) }));
  const row = (label: string, value: (model: LaneModel, postMs: number) => string): string[] => [label, ...columns.map(({ model, postMs }) => value(model, postMs))];
  const at20 = columns[0]?.model as LaneModel;
  const at10 = columns[1]?.model as LaneModel;
  return [
    '### The AWS model: 10,000 subscribers, 50 events/s',
    '',
    `Derived from the CPU per delivery measured above (${us(cpu)}: ${repeats > 1 ? `over the ${repeats} repeats together` : 'the run'} with ${grouped(run.subscribers)} subscribers and W = ${run.workers}, the lane hand-off included; on this machine's core, and without a real post's own CPU, so a lower bound) and the lane function at ${grouped(memory)} MB (its CDK shape in \`infra/constructs/relay-functions.ts\`, as \`bench/prices.ts\` takes it; Lambda gives one vCPU at ${grouped(MB_PER_VCPU)} MB and CPU in proportion to memory, [Lambda Developer Guide](${LAMBDA_MEMORY_URL})). The column at 20 ms is the issue's post latency; the one at 10 ms is for comparison, not a measured AWS figure. F, the time per batch that is not posting (the stream's hand-off, ordering, reading 10,000 subscriptions, the lane invocations), is assumed: ${ASSUMED_BATCH_FIXED_MS} ms (this stack's POST → first delivery above is ${grouped(run.firstDeliveryMs)} ms, with DynamoDB Local and a 100 ms stream poll).`,
    '',
    table(
      ['', 'post latency 20 ms', 'post latency 10 ms', 'how'],
      [
        [...row('deliveries / s', (model) => grouped(model.deliveriesPerSecond)), '10,000 subscribers × 50 events/s'],
        [...row('posts in flight needed', (model) => grouped(model.postsInFlight)), 'deliveries/s × post latency'],
        [...row('each connection busy', (model) => `${fixed(100 * model.connectionBusy, 0)}%`), 'one post at a time per connection (its order): 50 events/s × post latency'],
        [...row('rate per lane, posts-bound', (model) => `${grouped(model.latencyBoundPerLane)} / s`), `${result.settings.concurrency} in flight (\`AEP_FANOUT_CONCURRENCY\`) ÷ post latency`],
        [...row('rate per lane, CPU-bound', (model) => `${grouped(model.cpuBoundPerLane)} / s`), `${fixed(at20.laneVcpu)} vCPU at ${grouped(memory)} MB ÷ ${us(cpu)} per delivery`],
        [...row('lanes to carry the rate', (model) => String(model.lanesToCarry)), 'deliveries/s ÷ the lesser rate per lane'],
        [...row('lanes, each half busy', (model) => `**${model.lanes}**`), 'twice that: the batch rows assume it'],
        [...row('batch duration D', (model) => (model.sustainable ? ms(model.batchMs) : `${ms(model.batchMs)} at ${MAX_RECORDS_PER_BATCH} records, growing backlog`)), 'D = F ÷ (1 − the busier of connection and lane)'],
        [...row('records per batch', (model) => fixed(model.recordsPerBatch, 0)), `50 events/s × D, at most ${MAX_RECORDS_PER_BATCH}`],
        [...row('delivery p99', (model) => `**${model.sustainable ? ms(model.p99Ms) : 'unbounded'}**`), 'the wait for the batch (up to D) + the batch (up to D): ≈ 2D'],
        [...row('lane GB-seconds per million deliveries', (model) => fixed(model.laneGbSecondsPerMillion, 1)), `10⁶ ÷ rate per lane × ${fixed(memory / 1024)} GB (posting time)`],
        [...row('lane invocations per million deliveries', (model) => grouped(model.laneInvocationsPerMillion)), '(lanes − 1) per batch ÷ deliveries per batch'],
        [...row('$ per million: lane duration', (model) => usd(model.dollarsPerMillion.laneDuration)), `at $${PRICES.lambdaArmGbSecond.usd} per GB-second (Arm)`],
        [...row('$ per million: lane requests', (model) => usd(model.dollarsPerMillion.laneRequests)), `at $${PRICES.lambdaRequest.usd} per million invocations`],
        [...row('$ per million: WebSocket messages', (model) => usd(model.dollarsPerMillion.websocketMessages)), `one message per delivery at $${PRICES.websocketMessage.usd} per million`],
        [...row('**$ per million deliveries**', (model) => `**${usd(model.dollarsPerMillion.total)}**`), 'the three above (fan-out\'s own invocation and DynamoDB reads are per batch, not per delivery: the cost grid)'],
        [...row('lane work per lane invocation', (model) => mb(laneWork(model))), `the Invoke payload (\`encodeLaneWork\`) of records per batch × subscribers ÷ lanes; fan-out sends at most ${fixed(LANE_PAYLOAD_BYTES / 2 ** 20, 0)} MB per invocation`],
        [...row('`@connections` requests / s', (model) => `${grouped(model.apiGatewayRps)} (${grouped(model.apiGatewayQuotaMultiple)}× the default quota)`), `one PostToConnection per delivery, against ${grouped(API_GATEWAY_ACCOUNT_RPS)} requests/s per account and Region`],
      ],
      ['l', 'r', 'r', 'l'],
    ),
    '',
    `**What binds.** ${at20.sustainable ? `At 20 ms the model keeps up with a p99 of about ${ms(at20.p99Ms)}.` : `At a 20 ms post the target cannot be met by adding lanes: each connection would need a post in flight ${fixed(100 * at20.connectionBusy, 0)}% of the time, and fan-out posts to a connection one at a time to keep its order (AEP-0003 §3.5: one Event or frame per WebSocket text frame, so events cannot share a post). The batches grow to their ${MAX_RECORDS_PER_BATCH}-record cap and fall behind. Meeting it takes a post latency well under 20 ms per connection${at10.sustainable ? ` (at 10 ms: ${at10.lanes} lanes, p99 about ${ms(at10.p99Ms)})` : ''}, or fewer events per subscriber.`} ` +
      `Lanes: \`-c fanoutLanes\` (at most ${DEFAULT_MAX_LANES} lanes per batch by default, \`AEP_FANOUT_MAX_LANES\`) must be raised to the lanes the model needs (${at10.lanes} at 10 ms), and the lane function's concurrency must allow as many at once. Lane work travels in the Invoke request, and Lambda refuses a synchronous payload over ${fixed(LAMBDA_SYNC_PAYLOAD_BYTES / 2 ** 20, 0)} MB ([Invoke](${LAMBDA_INVOKE_URL})), so fan-out keeps each invocation's work under ${fixed(LANE_PAYLOAD_BYTES / 2 ** 20, 0)} MB and sends a bigger lane as parts one after another (\`LANE_PAYLOAD_BYTES\`): a full ${MAX_RECORDS_PER_BATCH}-record batch to ${grouped(TARGET.subscribers)} subscribers in the default ${DEFAULT_MAX_LANES} lanes is ${mb(fullBatchAtDefault)} per lane${fullBatchAtDefault > LANE_PAYLOAD_BYTES ? `, ${Math.ceil(fullBatchAtDefault / LANE_PAYLOAD_BYTES)} parts in a row, each lane's posting that much longer` : ', one invocation each'}; at the model's lanes and batches each lane is one invocation. ` +
      `The binding AWS quota is API Gateway's throttle: ${grouped(API_GATEWAY_ACCOUNT_RPS)} requests per second per account and Region, shared by REST, HTTP, WebSocket and WebSocket callback (\`@connections\`) APIs, adjustable ([Amazon API Gateway quotas](${API_GATEWAY_QUOTAS_URL})). Every delivery is one PostToConnection, so ${grouped(at20.deliveriesPerSecond)} deliveries/s needs a quota increase of that order (${grouped(at20.apiGatewayQuotaMultiple)}× the default), before any lane count matters.`,
    '',
  ];
}
