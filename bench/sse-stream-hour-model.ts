/**
 * The SSE stream-hour from one measured stream: what the stage measures (a stream served alone
 * in a process, idle then a burst: bench/sse-stream-process.ts) turned into an hour held open,
 * every periodic cost in it, and priced. Pure: the stage (bench/sse-stream-hour.ts), the report
 * (bench/sse-stream-hour-report.ts) and the tests share it.
 */
import { mean, median } from './cpu-reference.ts';
import { PRICES } from './prices.ts';

/**
 * The stream settings the stack deploys (infra/constructs/relay-functions.ts sets the poll and
 * the flush padding; infra/relay-settings.ts the pool of 180 streams and a tenant's quarter of it;
 * the rest are the relay's defaults, src/config/relay-config.ts). The stage serves its streams at
 * these; test/infra/relay-stack.test.ts checks the stream function's environment says the same.
 */
export const DEPLOYED_STREAM = {
  pollMs: 250,
  idlePollMs: 2_000,
  backoffAfterPolls: 8,
  heartbeatMs: 15_000,
  revalidateMs: 30_000,
  slotLeaseMs: 120_000,
  idleEndMs: 300_000,
  maxDurationMs: 840_000,
  flushPaddingBytes: 16_384,
  maxLiveStreams: 180,
  maxStreamsPerTenant: 45,
} as const;

/** The relay's variables for `DEPLOYED_STREAM`, for the process that serves the measured stream. */
export const DEPLOYED_STREAM_ENV: Record<string, string> = {
  AEP_SSE_POLL_MS: String(DEPLOYED_STREAM.pollMs),
  AEP_SSE_IDLE_POLL_MS: String(DEPLOYED_STREAM.idlePollMs),
  AEP_SSE_BACKOFF_AFTER_POLLS: String(DEPLOYED_STREAM.backoffAfterPolls),
  AEP_SSE_HEARTBEAT_MS: String(DEPLOYED_STREAM.heartbeatMs),
  AEP_SSE_REVALIDATE_MS: String(DEPLOYED_STREAM.revalidateMs),
  AEP_SSE_SLOT_LEASE_MS: String(DEPLOYED_STREAM.slotLeaseMs),
  AEP_SSE_IDLE_END_MS: String(DEPLOYED_STREAM.idleEndMs),
  AEP_SSE_MAX_DURATION_MS: String(DEPLOYED_STREAM.maxDurationMs),
  AEP_SSE_FLUSH_PADDING_BYTES: String(DEPLOYED_STREAM.flushPaddingBytes),
  AEP_SSE_MAX_LIVE_STREAMS: String(DEPLOYED_STREAM.maxLiveStreams),
  AEP_SSE_MAX_STREAMS_PER_TENANT: String(DEPLOYED_STREAM.maxStreamsPerTenant),
};

/** What the stream function was deployed with before the memory was measured. */
export const BEFORE_MEMORY_MB = 512;
const HOUR_S = 3600;
/** An idle stream ends at its idle end and its client opens another: streams (Lambda requests) an idle hour holds. */
export const STREAMS_PER_HOUR = HOUR_S / (Math.min(DEPLOYED_STREAM.idleEndMs, DEPLOYED_STREAM.maxDurationMs) / 1000);

export type StreamPhase = 'setup' | 'idle' | 'burst' | 'cleanup';

/** One DynamoDB call the measured stream made. */
export interface CallRecord {
  phase: StreamPhase;
  command: string;
  /** Which table (`events`, `connections`, `tenants`), for naming what the call is for. */
  table?: string;
  kind: 'read' | 'write';
  consistent: boolean;
  /** The units DynamoDB bills: those reported, never below the least a call is billed. */
  billedUnits: number;
}

/** What the process serving one stream reports (bench/sse-stream-process.ts). */
export interface StreamProcessReport {
  variant: string;
  calls: CallRecord[];
  /** Milliseconds each phase lasted. */
  phaseMs: Record<StreamPhase, number>;
  delivered: number;
  /** Heartbeat comments (`: ping`) and response bytes (heartbeats, flush padding) in the idle phase. */
  heartbeats: number;
  idleBytes?: number;
  rss: { atStartMb: number; beforeStreamMb: number; peakMb: number; peakHeapUsedMb: number };
  /** CPU the burst took (one sample, JIT warm-up and all: on record, not the figure). */
  burstCpuMs: number;
  /**
   * The CPU phase after the burst (the "after" stream only): slices of deliveries, each timed
   * from the read that brought its first event to the read that deleted its events, in
   * alternation with slices of the CPU yardstick, the fixed reference pipeline
   * (bench/cpu-reference.ts) over the burst's events, in the same process: reference 0,
   * slice 0, reference 1, ..., slice n − 1, reference n. Absent when the phase did not run.
   */
  cpuSlices?: Array<{ deliveries: number; cpuMs: number; reads?: number; calls?: number }>;
  referenceSlices?: Array<{ events: number; cpuMs: number }>;
}

/** CPU per delivery against the yardstick, from the CPU phase's alternating slices. */
export interface CpuAgainstReference {
  /** The median slice's CPU per delivery, this machine's. */
  msPerDelivery: number;
  /** The median reference slice's CPU per event, this machine's. */
  referenceMsPerEvent: number;
  /** Each slice's ms per delivery, and each reference slice's ms per event, in the order taken. */
  slicesMsPerDelivery: number[];
  referencesMsPerEvent: number[];
  /** Each slice's ms per delivery ÷ the mean of the reference slices either side of it (on record: the spread). */
  pairRatios: number[];
  /**
   * The figure: the median slice ÷ the median reference slice. Their noise is mostly each
   * slice's own (a collection, another process on the cores for a few ms), not a change of the
   * machine's speed that both sides of a pair would share, so each median filters its own; the
   * median of the pair ratios compounds both, and moved 83× to 96× over three runs where this
   * moved 88× to 95× (the same runs' slices).
   */
  ratio: number;
}

/** The ratio of the CPU phase's slices to the reference slices around them; undefined without a phase. */
export function cpuAgainstReference(report: Pick<StreamProcessReport, 'cpuSlices' | 'referenceSlices'>): CpuAgainstReference | undefined {
  const slices = (report.cpuSlices ?? []).filter((slice) => slice.deliveries > 0);
  const references = (report.referenceSlices ?? []).map((slice) => slice.cpuMs / slice.events);
  if (slices.length === 0 || references.length !== slices.length + 1 || references.some((value) => !(value > 0))) return undefined;
  const perDelivery = slices.map((slice) => slice.cpuMs / slice.deliveries);
  const pairRatios = perDelivery.map((value, index) => value / (((references[index] as number) + (references[index + 1] as number)) / 2));
  return { msPerDelivery: median(perDelivery), referenceMsPerEvent: median(references), slicesMsPerDelivery: perDelivery, referencesMsPerEvent: references, pairRatios, ratio: median(perDelivery) / median(references) };
}

/**
 * What an idle-phase call is for, by the stream's loop (src/relay/sse/serve-stream.ts): the
 * inbox probe and read (connections table, eventually and strongly consistent), the slot
 * renewal (a lease update in the connections table per slot held: the tenant's, its share of
 * the pool, the pool's), the token re-check (tenants table).
 */
export function callPurpose(call: Pick<CallRecord, 'command' | 'table' | 'kind' | 'consistent'>): string {
  const command = call.command.replace('Command', '');
  const raw = `${command}${call.kind === 'read' ? (call.consistent ? ', strong' : ', eventual') : ''}`;
  if (call.table === 'connections' && command === 'Query') return call.consistent ? `inbox read (${raw})` : `inbox probe (${raw})`;
  if (call.table === 'tenants' && command === 'GetItem') return `token re-check (${raw})`;
  if (call.table === 'connections' && command === 'UpdateItem') return `slot renewal (${raw})`;
  return raw;
}

export interface StreamHourRow {
  memoryMb: number;
  readUnits: number;
  writeUnits: number;
  idleCallsPerHour: number;
  byCommand: Array<{ call: string; callsPerHour: number; unitsPerHour: number }>;
  heartbeatsPerHour: number;
  /** Response bytes an idle hour sends (heartbeats and their flush padding); not priced (data transfer is outside the price table). */
  idleBytesPerHour?: number;
  setupAndCleanup: { readUnits: number; writeUnits: number };
  usd: { lambdaDuration: number; lambdaRequests: number; dynamoReads: number; dynamoWrites: number; total: number };
}

const sumUnits = (calls: readonly CallRecord[], kind: 'read' | 'write') => calls.filter((call) => call.kind === kind).reduce((total, call) => total + call.billedUnits, 0);

/**
 * One stream held open an hour: the idle phase's calls scaled to 3,600 s, plus the setup and
 * cleanup of each of the `STREAMS_PER_HOUR` streams an idle client opens in it (each a Lambda
 * request), plus Lambda duration for the whole hour at `memoryMb`.
 */
export function hourOf(report: StreamProcessReport, memoryMb: number): StreamHourRow {
  const idle = report.calls.filter((call) => call.phase === 'idle');
  const once = report.calls.filter((call) => call.phase === 'setup' || call.phase === 'cleanup');
  const idleSeconds = report.phaseMs.idle / 1000;
  const perHour = (count: number) => (count / idleSeconds) * HOUR_S;
  const groups = new Map<string, { calls: number; units: number }>();
  for (const call of idle) {
    const group = groups.get(callPurpose(call)) ?? { calls: 0, units: 0 };
    group.calls += 1;
    group.units += call.billedUnits;
    groups.set(callPurpose(call), group);
  }
  const byCommand = [...groups].map(([call, { calls, units }]) => ({ call, callsPerHour: perHour(calls), unitsPerHour: perHour(units) }));
  const readUnits = perHour(sumUnits(idle, 'read')) + STREAMS_PER_HOUR * sumUnits(once, 'read');
  const writeUnits = perHour(sumUnits(idle, 'write')) + STREAMS_PER_HOUR * sumUnits(once, 'write');
  const usd = {
    lambdaDuration: HOUR_S * (memoryMb / 1024) * PRICES.lambdaArmGbSecond.usd,
    lambdaRequests: (STREAMS_PER_HOUR * PRICES.lambdaRequest.usd) / 1e6,
    dynamoReads: (readUnits * PRICES.dynamoRead.usd) / 1e6,
    dynamoWrites: (writeUnits * PRICES.dynamoWrite.usd) / 1e6,
  };
  return {
    memoryMb,
    readUnits,
    writeUnits,
    idleCallsPerHour: perHour(idle.length),
    byCommand,
    heartbeatsPerHour: perHour(report.heartbeats),
    ...(report.idleBytes === undefined ? {} : { idleBytesPerHour: perHour(report.idleBytes) }),
    setupAndCleanup: { readUnits: sumUnits(once, 'read'), writeUnits: sumUnits(once, 'write') },
    usd: { ...usd, total: usd.lambdaDuration + usd.lambdaRequests + usd.dynamoReads + usd.dynamoWrites },
  };
}

/**
 * The memory size for a measured peak RSS: half again as much (a Lambda environment adds the
 * runtime client, and a bigger replay or burst than the bench's needs room), rounded up to a
 * multiple of 64 MB, at least Lambda's 128 MB.
 */
export function sizeFromPeak(peakMb: number): number {
  return Math.max(128, Math.ceil((peakMb * 1.5) / 64) * 64);
}

/** Lambda allots CPU in proportion to memory: one vCPU at 1,769 MB. */
export const MB_PER_VCPU = 1769;

/** The SSE stream-hour stage's results (bench/sse-stream-hour.json). */
export interface SseStreamHour {
  measuredAt: string;
  /** The commit measured (absent in results saved before it was recorded). */
  commit?: string;
  dirty?: boolean;
  settings: Record<string, number>;
  memory: {
    peakRssMb: number;
    before: StreamProcessReport['rss'];
    after: StreamProcessReport['rss'];
    sizedMb: number;
    setMb: number;
    /** This machine's CPU per delivery: the CPU phase's median slice (results from before it: the burst's). */
    cpuMsPerDelivery: number;
    /**
     * The same as a ratio to the reference pipeline's CPU per event in the same process: the
     * CPU phase's median slice ÷ its median reference slice, the mean over the stream processes
     * of each one's own (absent before it was measured; results from before the pairs took one
     * reference run after the stream).
     */
    cpuRatioToReference?: number;
    referenceCpuMsPerEvent?: number;
    /** Each stream process's own ratio, of which `cpuRatioToReference` is the mean (absent in results from one process). */
    cpuProcessRatios?: number[];
    /** Every pair's ratio, so the spread is on record, and every slice of both kinds, in the order taken (absent before the pairs). */
    cpuPairRatios?: number[];
    cpuSlicesMsPerDelivery?: number[];
    referenceSlicesMsPerEvent?: number[];
    /** Deliveries in each CPU slice, and the median slice's DynamoDB calls (its read, and the read that deleted it) (absent before the pairs). */
    cpuSliceDeliveries?: number;
    cpuSliceCalls?: number;
    /** Deliveries a second the set size's CPU share sustains, at this machine's CPU per delivery (a machine's figure: a faster core sustains more). */
    deliveriesPerSecondAtSize: number;
  };
  delivered: { before: number; after: number };
  heartbeats: { before: number; after: number };
  hour: { before: StreamHourRow; after: StreamHourRow };
  websocketIdleHourUsd: number;
}

/**
 * The CPU figure over several stream processes: each process's own ratio (`cpuAgainstReference`),
 * combined by their mean, the slices of every process on record. One process keeps one compiled
 * form of the reference pipeline and of the delivery path for its life: the reference's median
 * slice read 2.94 µs an event in one full run and 4.02 µs in the next (the deliveries' 0.225 and
 * 0.238 ms), and the ratio 76.8× and 59.2×; the CPU stage answers the same thing with a fresh
 * process per repeat. Undefined where any process lacks the phase.
 */
export function cpuAgainstReferenceOver(reports: ReadonlyArray<Pick<StreamProcessReport, 'cpuSlices' | 'referenceSlices'>>): (CpuAgainstReference & { processRatios: number[] }) | undefined {
  const each = reports.map(cpuAgainstReference);
  if (each.length === 0 || each.some((cpu) => cpu === undefined)) return undefined;
  const all = each as CpuAgainstReference[];
  const meanOf = (pick: (cpu: CpuAgainstReference) => number) => mean(all.map(pick));
  return {
    msPerDelivery: meanOf((cpu) => cpu.msPerDelivery),
    referenceMsPerEvent: meanOf((cpu) => cpu.referenceMsPerEvent),
    slicesMsPerDelivery: all.flatMap((cpu) => cpu.slicesMsPerDelivery),
    referencesMsPerEvent: all.flatMap((cpu) => cpu.referencesMsPerEvent),
    pairRatios: all.flatMap((cpu) => cpu.pairRatios),
    ratio: meanOf((cpu) => cpu.ratio),
    processRatios: all.map((cpu) => cpu.ratio),
  };
}

/**
 * The stream-hour figures from the two measured streams: `before` every read strongly
 * consistent and no backoff, priced at the 512 MB the function had; `after` as the relay runs
 * now, priced at the size the stack sets (`setMb`; the stage says when the measured peak sizes
 * it otherwise).
 */
export function streamHourOf(before: StreamProcessReport, after: StreamProcessReport, setMb: number, run: { measuredAt: string; commit?: string; dirty?: boolean; idleSeconds: number; burstEvents: number; cpuSlices?: number; sliceEvents?: number }, moreCpu: readonly StreamProcessReport[] = []): SseStreamHour {
  // Sized from the stream the function runs: "before" (no backoff, every read strong) is priced
  // as it was, not deployed, and its peak is not the function's.
  const peakRssMb = after.rss.peakMb;
  const sizedMb = sizeFromPeak(peakRssMb);
  const cpu = cpuAgainstReferenceOver([after, ...moreCpu]);
  const cpuMsPerDelivery = cpu?.msPerDelivery ?? after.burstCpuMs / Math.max(1, after.delivered);
  return {
    measuredAt: run.measuredAt,
    ...(run.commit === undefined ? {} : { commit: run.commit }),
    ...(run.dirty === undefined ? {} : { dirty: run.dirty }),
    settings: { ...DEPLOYED_STREAM, idleSeconds: run.idleSeconds, burstEvents: run.burstEvents, ...(run.cpuSlices === undefined ? {} : { cpuSlices: run.cpuSlices }), ...(run.sliceEvents === undefined ? {} : { sliceEvents: run.sliceEvents }), streamsPerHour: STREAMS_PER_HOUR },
    memory: {
      peakRssMb,
      before: before.rss,
      after: after.rss,
      sizedMb,
      setMb,
      cpuMsPerDelivery,
      ...(cpu === undefined ? {} : { cpuRatioToReference: cpu.ratio, referenceCpuMsPerEvent: cpu.referenceMsPerEvent, cpuProcessRatios: cpu.processRatios, cpuPairRatios: cpu.pairRatios, cpuSlicesMsPerDelivery: cpu.slicesMsPerDelivery, referenceSlicesMsPerEvent: cpu.referencesMsPerEvent, cpuSliceDeliveries: after.cpuSlices?.[0]?.deliveries ?? 0, cpuSliceCalls: median((after.cpuSlices ?? []).map((slice) => slice.calls ?? Number.NaN)) }),
      deliveriesPerSecondAtSize: ((setMb / MB_PER_VCPU) * 1000) / cpuMsPerDelivery,
    },
    delivered: { before: before.delivered, after: after.delivered },
    heartbeats: { before: before.heartbeats, after: after.heartbeats },
    hour: { before: hourOf(before, BEFORE_MEMORY_MB), after: hourOf(after, setMb) },
    websocketIdleHourUsd: (60 * PRICES.websocketConnectionMinute.usd) / 1e6,
  };
}
