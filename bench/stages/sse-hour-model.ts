/** The SSE stream-hour from one measured stream (sse-stream-process.ts): its idle phase scaled to an hour held open, priced. */
import { PRICES } from '../pricing.ts';

/** The stream settings the stack deploys (test/infra/relay-stack.test.ts checks the stream function's environment says the same). */
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
const ENV_NAMES: Record<keyof typeof DEPLOYED_STREAM, string> = { pollMs: 'POLL_MS', idlePollMs: 'IDLE_POLL_MS', backoffAfterPolls: 'BACKOFF_AFTER_POLLS', heartbeatMs: 'HEARTBEAT_MS', revalidateMs: 'REVALIDATE_MS', slotLeaseMs: 'SLOT_LEASE_MS', idleEndMs: 'IDLE_END_MS', maxDurationMs: 'MAX_DURATION_MS', flushPaddingBytes: 'FLUSH_PADDING_BYTES', maxLiveStreams: 'MAX_LIVE_STREAMS', maxStreamsPerTenant: 'MAX_STREAMS_PER_TENANT' };
export const DEPLOYED_STREAM_ENV: Record<string, string> = Object.fromEntries(Object.entries(DEPLOYED_STREAM).map(([key, value]) => [`AEP_SSE_${ENV_NAMES[key as keyof typeof DEPLOYED_STREAM]}`, String(value)]));

const HOUR_S = 3600;
/** An idle stream ends at its idle end and its client opens another: streams (Lambda requests) an idle hour holds. */
export const STREAMS_PER_HOUR = HOUR_S / (Math.min(DEPLOYED_STREAM.idleEndMs, DEPLOYED_STREAM.maxDurationMs) / 1000);

export type StreamPhase = 'setup' | 'idle' | 'burst' | 'cleanup';

/** One DynamoDB call the measured stream made. */
export interface CallRecord {
  phase: StreamPhase;
  command: string;
  table?: string;
  kind: 'read' | 'write';
  consistent: boolean;
  billedUnits: number;
}

/** What sse-stream-process.ts reports. */
export interface StreamProcessReport {
  calls: CallRecord[];
  phaseMs: Record<StreamPhase, number>;
  delivered: number;
  heartbeats: number;
  idleBytes?: number;
  rss: { atStartMb: number; beforeStreamMb: number; peakMb: number; peakHeapUsedMb: number };
  burstCpuMs: number;
  referenceMsPerEvent: number;
}

/** What an idle-phase call is for in the stream's loop (src/relay/sse/serve-stream.ts). */
export function callPurpose(call: Pick<CallRecord, 'command' | 'table' | 'kind' | 'consistent'>): string {
  const command = call.command.replace('Command', '');
  const raw = `${command}${call.kind === 'read' ? (call.consistent ? ', strong' : ', eventual') : ''}`;
  if (call.table === 'connections' && command === 'Query') return call.consistent ? `inbox read (${raw})` : `inbox probe (${raw})`;
  if (call.table === 'tenants' && command === 'GetItem') return `token re-check (${raw})`;
  if (call.table === 'connections' && command === 'UpdateItem') return `slot renewal (${raw})`;
  return raw;
}

const sumUnits = (calls: readonly CallRecord[], kind: 'read' | 'write') => calls.filter((call) => call.kind === kind).reduce((total, call) => total + call.billedUnits, 0);

/** One stream held open an hour: the idle calls scaled to 3,600 s, the setup and cleanup of each of `STREAMS_PER_HOUR` streams, duration at `memoryMb`. */
export function hourOf(report: StreamProcessReport, memoryMb: number) {
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

/** The memory for a measured peak RSS: half again (the runtime client, bigger bursts), in 64 MB steps, at least 128 MB. */
export function sizeFromPeak(peakMb: number): number {
  return Math.max(128, Math.ceil((peakMb * 1.5) / 64) * 64);
}

/** The SSE stream-hour stage's results. */
export interface SseStreamHour {
  settings: Record<string, number>;
  peakRssMb: number;
  sizedMb: number;
  setMb: number;
  cpuRatioToReference?: number;
  cpuMsPerDelivery: number;
  referenceMsPerEvent?: number;
  hour: ReturnType<typeof hourOf>;
  heartbeats: number;
  websocketIdleHourUsd: number;
}

export function streamHourOf(report: StreamProcessReport, setMb: number, settings: Record<string, number>): SseStreamHour {
  const cpuMsPerDelivery = report.burstCpuMs / Math.max(1, report.delivered);
  return {
    settings: { ...DEPLOYED_STREAM, ...settings, streamsPerHour: STREAMS_PER_HOUR },
    peakRssMb: report.rss.peakMb,
    sizedMb: sizeFromPeak(report.rss.peakMb),
    setMb,
    cpuRatioToReference: cpuMsPerDelivery / report.referenceMsPerEvent,
    cpuMsPerDelivery,
    referenceMsPerEvent: report.referenceMsPerEvent,
    hour: hourOf(report, setMb),
    heartbeats: report.heartbeats,
    websocketIdleHourUsd: (60 * PRICES.websocketConnectionMinute.usd) / 1e6,
  };
}
