/** The bench's arithmetic: statistics, billed units and the duration model, the lanes model, the SSE stream-hour, and the report. */
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../local/usage.ts';
import type { FunctionUsage, StackUsage } from '../../local/usage.ts';
import { AWS_DYNAMO_CALL_MS, AWS_POST_MS, billedReadUnits, billedWriteUnits, MEMORY_MB, modelledGbSeconds, PRICES } from '../../bench/pricing.ts';
import { distribution, median, percentile } from '../../bench/stats.ts';
import { msPerRound, referencePipeline } from '../../bench/stages/cpu.ts';
import { lanesModel, postingBound } from '../../bench/stages/lanes.ts';
import type { LanesRun } from '../../bench/stages/lanes.ts';
import { callPurpose, DEPLOYED_STREAM, hourOf, sizeFromPeak, STREAMS_PER_HOUR, streamHourOf } from '../../bench/stages/sse-hour-model.ts';
import type { CallRecord, StreamProcessReport } from '../../bench/stages/sse-hour-model.ts';

const fn = (over: Partial<FunctionUsage> = {}): FunctionUsage => ({ invocations: 0, completed: 0, errors: 0, durationMs: 0, billedMs: 0, maxDurationMs: 0, readUnits: 0, writeUnits: 0, dynamoCalls: 0, emptyReads: 0, emptyReadUnits: 0, refusedWrites: 0, refusedWriteUnits: 0, ...over }) as FunctionUsage;
const usage = (functions: Partial<Record<(typeof FUNCTION_NAMES)[number], FunctionUsage>>, posts: number): StackUsage =>
  ({ functions: Object.fromEntries(FUNCTION_NAMES.map((name) => [name, functions[name] ?? fn()])), postToConnection: { calls: posts, byStatus: { '200': posts } }, socketRoutes: {}, fanoutRecords: 0 }) as unknown as StackUsage;

describe('statistics', () => {
  it('takes the median, the nearest-rank percentile and a distribution', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(distribution([10, 20, 30, 40])).toMatchObject({ count: 4, p50: 20, p99: 40, max: 40, mean: 25 });
  });
});

describe('billed units and the duration model', () => {
  it('counts empty reads and refused writes at their billed minimum', () => {
    expect(billedReadUnits({ readUnits: 10, writeUnits: 0, emptyReadUnits: 3 })).toBe(13);
    expect(billedWriteUnits({ readUnits: 0, writeUnits: 5, refusedWriteUnits: 2 })).toBe(7);
  });

  it('models fan-out from posts in flight at the AWS post latency, or its CPU per delivery when that is slower', () => {
    const measured = usage({ fanout: fn({ invocations: 2, dynamoCalls: 10 }) }, 1000);
    const gb = (ms: number) => (ms / 1000) * (MEMORY_MB.fanout / 1024);
    expect(modelledGbSeconds(measured, { concurrency: 100, cpuMsPerDelivery: 0 })).toBeCloseTo(gb(10 * AWS_DYNAMO_CALL_MS + (1000 * AWS_POST_MS) / 100 + 2), 9);
    expect(modelledGbSeconds(measured, { concurrency: 100, cpuMsPerDelivery: 1 })).toBeCloseTo(gb(10 * AWS_DYNAMO_CALL_MS + 1000 + 2), 9);
  });
});

describe('the CPU yardstick', () => {
  it('times the reference pipeline', () => {
    const texts = ['{"a":1,"b":"xy"}'];
    expect(referencePipeline(texts)).toBeGreaterThan(0);
    expect(msPerRound(() => referencePipeline(texts), 1)).toBeGreaterThan(0);
  });
});

describe('lanesModel', () => {
  const target = { subscribers: 10_000, eventsPerSecond: 50, postsPerLane: 256, laneMemoryMb: 1024, cpuMsPerDelivery: 0.025, batchFixedMs: 200 };

  it('at a 20 ms post: every connection always busy, so no lane count keeps up', () => {
    const model = lanesModel({ ...target, postMs: 20 });
    expect(model.deliveriesPerSecond).toBe(500_000);
    expect(model.connectionBusy).toBeCloseTo(1, 9);
    expect(model.ratePerLane).toBeCloseTo(12_800, 6);
    expect(model.lanes).toBe(80);
    expect(model.sustainable).toBe(false);
    expect(model.p99Ms).toBe(Number.POSITIVE_INFINITY);
    expect(model.dollarsPerMillion.total).toBeCloseTo(1 + 78.125 * PRICES.lambdaArmGbSecond.usd + (79 * 0.2) / 1e6, 12);
    expect(model.apiGatewayQuotaMultiple).toBe(50);
  });

  it('at a 10 ms post: CPU-bound lanes, half busy, D = F ÷ (1 − 0.5) and p99 ≈ 2D', () => {
    const model = lanesModel({ ...target, postMs: 10 });
    expect(model.ratePerLane).toBeCloseTo(1024 / 1769 / 0.000025, 6);
    expect(model.lanes).toBe(44);
    expect(model.batchMs).toBeCloseTo(400, 6);
    expect(model.p99Ms).toBeCloseTo(800, 6);
  });

  it('bounds a run by W × the posts in flight from its first delivery, or by one connection\'s posts in a row', () => {
    const run = { workers: 2, deliveries: 100_000, events: 10, firstDeliveryMs: 200 } as LanesRun;
    expect(postingBound(run, { concurrency: 256, postMs: 20 })).toBeCloseTo(100_000 / (0.2 + 100_000 / 25_600), 6);
    expect(postingBound({ ...run, events: 1000 }, { concurrency: 256, postMs: 20 })).toBeCloseTo(100_000 / (0.2 + 20), 6);
  });
});

const call = (phase: CallRecord['phase'], command: string, table: string, kind: CallRecord['kind'], consistent: boolean, billedUnits: number): CallRecord => ({ phase, command, table, kind, consistent, billedUnits });
const repeat = (count: number, record: CallRecord) => Array.from({ length: count }, () => record);

/** 120 s idle: 60 probes, 8 strong reads, 4 token re-checks, 9 slot renewals; setup 5 RRU and 9 WRU, cleanup 3 WRU. */
const report: StreamProcessReport = {
  calls: [
    ...repeat(5, call('setup', 'GetItemCommand', 'tenants', 'read', true, 1)),
    ...repeat(9, call('setup', 'UpdateItemCommand', 'connections', 'write', false, 1)),
    ...repeat(60, call('idle', 'QueryCommand', 'connections', 'read', false, 0.5)),
    ...repeat(8, call('idle', 'QueryCommand', 'connections', 'read', true, 1)),
    ...repeat(4, call('idle', 'GetItemCommand', 'tenants', 'read', true, 1)),
    ...repeat(9, call('idle', 'UpdateItemCommand', 'connections', 'write', false, 1)),
    ...repeat(40, call('burst', 'QueryCommand', 'connections', 'read', true, 2)),
    ...repeat(3, call('cleanup', 'DeleteItemCommand', 'connections', 'write', false, 1)),
  ],
  phaseMs: { setup: 300, idle: 120_000, burst: 4000, cleanup: 50 },
  delivered: 300,
  heartbeats: 8,
  rss: { atStartMb: 70, beforeStreamMb: 70.5, peakMb: 85, peakHeapUsedMb: 18 },
  burstCpuMs: 90,
  referenceMsPerEvent: 0.01,
};

describe('SSE stream-hour', () => {
  it('scales the idle phase to an hour and adds the setup and cleanup of each stream the hour holds', () => {
    const row = hourOf(report, 128);
    expect(STREAMS_PER_HOUR).toBe(3600 / (DEPLOYED_STREAM.idleEndMs / 1000));
    expect(row.readUnits).toBeCloseTo(42 * 30 + 5 * STREAMS_PER_HOUR);
    expect(row.writeUnits).toBeCloseTo(9 * 30 + 12 * STREAMS_PER_HOUR);
    expect(row.usd.lambdaDuration).toBeCloseTo(3600 * (128 / 1024) * PRICES.lambdaArmGbSecond.usd, 10);
    expect(Object.fromEntries(row.byCommand.map((entry) => [entry.call, entry.callsPerHour]))['inbox probe (Query, eventual)']).toBe(1800);
    expect(callPurpose({ command: 'ScanCommand', kind: 'read', consistent: false })).toBe('Scan, eventual');
  });

  it('sizes the memory from the peak and half again in 64 MB steps, and takes CPU as the burst per delivery ÷ the reference per event', () => {
    expect(sizeFromPeak(85)).toBe(128);
    expect(sizeFromPeak(100)).toBe(192);
    const hour = streamHourOf(report, 128, { idleSeconds: 120 });
    expect(hour.cpuMsPerDelivery).toBeCloseTo(0.3, 9);
    expect(hour.cpuRatioToReference).toBeCloseTo(0.3 / 0.01, 6);
  });
});
