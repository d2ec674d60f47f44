/**
 * A consumer that stops reading on a busy session must not slow the others (AEP-0003 §8.4):
 * a healthy consumer's POST → WebSocket latency, with and without a paused consumer on the same
 * session, over a stream of 2 KB `notice` events (never droppable). After the run the paused
 * consumer reads again and must find a `closing` frame naming the last event it got, then the
 * close.
 */
import type { RunningStack } from '../local/stack.ts';
import { BenchSocket, createTenant, postEvents, sleep, uniqueName, waitUntil } from './clients.ts';
import type { Frame } from './clients.ts';
import { settle } from './cost.ts';
import { distribution, medianSummary } from './latency.ts';
import type { Distribution } from './latency.ts';
import { mintId } from './clients.ts';
import { median } from './cpu-reference.ts';

export interface PausedConsumerResult {
  events: number;
  eventBytes: number;
  batch: number;
  paceMs: number;
  healthyAlone: Omit<Distribution, 'samples'>;
  healthyBesidePaused: Omit<Distribution, 'samples'>;
  /** What the paused consumer got: events before the closing frame, the frame, and the close. */
  paused: { eventsReceived: number; closingReceived: boolean; closingMatchesLastEvent: boolean; closedAfterClosing: boolean; closeCode: number | undefined };
  /**
   * Every consecutive run of the stage. The result's own `healthyAlone` and `healthyBesidePaused`
   * are the per-figure medians over the runs the stack carried (this machine's milliseconds), and
   * its `paused` is the first run whose closing check failed, else the last run's. Absent in
   * results from before repeats, whose own figures are one run's.
   */
  runs?: PausedConsumerRun[];
}

export type PausedConsumerRun = Pick<PausedConsumerResult, 'healthyAlone' | 'healthyBesidePaused' | 'paused'>;

/**
 * Whether the local stack itself was the limit in a run: the healthy consumer, alone, lagged the
 * emitter by more than ten of its rounds at the median (p50 over 10 × the pace; measured: 3 to
 * 7 s in runs on a loaded machine against about 100 ms on a quiet one). Then both halves measure
 * the stack's backlog, not the relay's isolation of a paused consumer, and the ratio says nothing.
 */
export const SATURATION_PACES = 10;
export const stackSaturated = (run: PausedConsumerRun, paceMs: number): boolean => run.healthyAlone.p50 > SATURATION_PACES * paceMs;

/** The percentiles the stage states as ratios. The maximum is one sample, so it is not one of them. */
export const PAUSED_RATIO_KEYS = ['p50', 'p95', 'p99'] as const;
export type PausedRatioKey = (typeof PAUSED_RATIO_KEYS)[number];

/** One run's ratio: the healthy consumer beside the paused one ÷ alone, in that run. */
export const runRatio = (run: PausedConsumerRun, key: PausedRatioKey) => run.healthyBesidePaused[key] / run.healthyAlone[key];

/** The runs the stack carried (not saturated); a result from before repeats is its own one run. */
export function carriedRuns(result: PausedConsumerResult): PausedConsumerRun[] {
  return (result.runs ?? [result]).filter((run) => !stackSaturated(run, result.paceMs));
}

/**
 * The stage's figures: for each percentile, the median over the carried runs of each run's own
 * ratio. A single run moves either way with a stall of the whole shared machine during one of
 * its halves (measured: 3.01× and 1.08× for the same run position in two consecutive full runs);
 * the median of several runs, each its own alone/beside pair minutes apart, does not follow one
 * stall. Undefined when fewer than half the runs were carried: the stack, not the relay, was the
 * limit.
 */
export function medianRatios(result: PausedConsumerResult): Record<PausedRatioKey, number> | undefined {
  const carried = carriedRuns(result);
  const all = result.runs?.length ?? 1;
  if (carried.length === 0 || carried.length * 2 < all) return undefined;
  return Object.fromEntries(PAUSED_RATIO_KEYS.map((key) => [key, median(carried.map((run) => runRatio(run, key)))])) as Record<PausedRatioKey, number>;
}

/** Whether a run's paused consumer got its closing frame, naming its last event, then the close. */
export const closingHeld = (run: PausedConsumerRun) => run.paused.closingReceived && run.paused.closingMatchesLastEvent && run.paused.closedAfterClosing;

/**
 * `times` consecutive runs on one stack, each an alone/beside pair; the result carries every run
 * and the medians of the carried ones. `warmUps` healthy-only runs come first, discarded: on a
 * fresh stack DynamoDB Local's JVM is cold, and the first few thousand 2 KB events take seconds
 * each way (measured p50 2.7 s and 155 ms for the first two).
 */
export async function runPausedConsumerRepeated(stack: RunningStack, plan: { events: number; batch: number; paceMs: number; eventBytes: number }, times: number, onRun: (run: PausedConsumerRun, index: number) => void, warmUps = 0): Promise<PausedConsumerResult> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-warm'));
  for (let index = 0; index < warmUps; index += 1) {
    await healthyLatency(stack, token, plan, false);
    await settle(stack, 500, 120_000);
  }
  const runs: PausedConsumerRun[] = [];
  for (let index = 0; index < times; index += 1) {
    const { healthyAlone, healthyBesidePaused, paused } = await runPausedConsumer(stack, plan);
    runs.push({ healthyAlone, healthyBesidePaused, paused });
    onRun({ healthyAlone, healthyBesidePaused, paused }, index);
    await settle(stack, 500, 120_000);
  }
  const carried = runs.filter((run) => !stackSaturated(run, plan.paceMs));
  const summarised = carried.length > 0 ? carried : runs;
  return {
    ...plan,
    healthyAlone: medianSummary(summarised.map((run) => run.healthyAlone)),
    healthyBesidePaused: medianSummary(summarised.map((run) => run.healthyBesidePaused)),
    paused: (runs.find((run) => !closingHeld(run)) ?? (runs.at(-1) as PausedConsumerRun)).paused,
    runs,
  };
}

function blobEvent(session: string, seq: number, bytes: number): Record<string, unknown> {
  return {
    aep: '0.1',
    id: mintId(),
    type: 'x.bench.load.blob',
    time: new Date().toISOString(),
    source: `aep://bench-host/agent/bench-agent/session/${session}`,
    agent: 'bench-agent',
    session,
    seq,
    severity: 'notice',
    data: { blob: 'b'.repeat(bytes) },
  };
}

async function emit(stack: RunningStack, token: string, session: string, plan: { events: number; batch: number; paceMs: number; eventBytes: number }, firstSeq = 0): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  const start = performance.now();
  const posts: Array<Promise<void>> = [];
  for (let offset = 0, round = 0; offset < plan.events; offset += plan.batch, round += 1) {
    // Evenly paced; the pace is not a multiple of the stream poll's period (run.ts), so the
    // batches' phase against the poll sweeps every value within each half.
    const wait = start + round * plan.paceMs - performance.now();
    if (wait > 0) await sleep(wait);
    const events = Array.from({ length: Math.min(plan.batch, plan.events - offset) }, (_, index) => blobEvent(session, firstSeq + offset + index, plan.eventBytes));
    const at = performance.now();
    for (const event of events) sentAt.set(event.id as string, at);
    posts.push(postEvents(stack.baseUrl, token, events.map((event) => JSON.stringify(event)).join('\n') + '\n', 'application/x-ndjson'));
  }
  await Promise.all(posts);
  return sentAt;
}

async function healthyLatency(stack: RunningStack, token: string, plan: { events: number; batch: number; paceMs: number; eventBytes: number }, withPaused: boolean): Promise<{ latency: Omit<Distribution, 'samples'>; session: string; paused?: BenchSocket; pausedFrames: Frame[] }> {
  const session = uniqueName('busy');
  const healthy = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'healthy', filter: { session } });
  const paused = withPaused ? await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'paused', filter: { session } }) : undefined;
  const pausedFrames: Frame[] = [];
  paused?.on((frame) => pausedFrames.push(frame));
  paused?.socket.pause();
  const receivedAt = new Map<string, number>();
  healthy.on((frame, atMs) => {
    if (frame.session === session && typeof frame.id === 'string') receivedAt.set(frame.id, atMs);
  });
  const sentAt = await emit(stack, token, session, plan);
  await waitUntil(() => receivedAt.size >= plan.events, () => `healthy consumer got ${receivedAt.size}/${plan.events}`, 300_000, 20);
  await healthy.close();
  const { samples: _samples, ...latency } = distribution([...sentAt].map(([id, at]) => (receivedAt.get(id) as number) - at));
  return { latency, session, pausedFrames, ...(paused === undefined ? {} : { paused }) };
}

export async function runPausedConsumer(stack: RunningStack, plan: { events: number; batch: number; paceMs: number; eventBytes: number }): Promise<PausedConsumerResult> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-paused'));
  const alone = await healthyLatency(stack, token, plan, false);
  await settle(stack, 500, 120_000);
  const beside = await healthyLatency(stack, token, plan, true);
  const paused = beside.paused as BenchSocket;
  const frames = beside.pausedFrames;
  const closed = new Promise<number>((resolve) => paused.socket.once('close', (code) => resolve(code)));
  let closeCode: number | undefined;
  void closed.then((code) => {
    closeCode = code;
  });
  // The consumer reads again; later batches of its session hand it the closing frame.
  paused.socket.resume();
  let seq = plan.events;
  const deadline = Date.now() + 60_000;
  // A buffer that never filled means no decision was made: the consumer then simply gets everything.
  const everything = () => paused.events >= plan.events && !frames.some((frame) => frame.type === 'closing');
  let calmSince: number | undefined;
  while (closeCode === undefined && Date.now() < deadline) {
    if (everything()) calmSince ??= Date.now();
    if (calmSince !== undefined && Date.now() - calmSince > 5_000) break;
    await postEvents(stack.baseUrl, token, JSON.stringify(blobEvent(beside.session, seq, 100)), 'application/json');
    seq += 1;
    await sleep(300);
  }
  await settle(stack, 500, 120_000);
  const events = frames.filter((frame) => frame.session === beside.session && typeof frame.aep === 'string');
  const closingIndex = frames.findIndex((frame) => frame.type === 'closing');
  const closing = frames[closingIndex];
  const lastBefore = events.filter((event) => frames.indexOf(event) < closingIndex).at(-1);
  const delivered = (closing?.delivered ?? []) as Array<{ sub: string; session: string; epoch: number; seq: number }>;
  return {
    ...plan,
    healthyAlone: alone.latency,
    healthyBesidePaused: beside.latency,
    paused: {
      eventsReceived: paused.events,
      closingReceived: closing !== undefined,
      closingMatchesLastEvent: lastBefore !== undefined && delivered.length === 1 && delivered[0]?.seq === lastBefore.seq && delivered[0]?.session === beside.session,
      closedAfterClosing: closing !== undefined && closeCode !== undefined && frames.slice(closingIndex + 1).every((frame) => typeof frame.aep !== 'string'),
      closeCode,
    },
  };
}
