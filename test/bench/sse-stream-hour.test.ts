/**
 * The SSE stream-hour's arithmetic: an idle phase scaled to an hour with the setup and cleanup of
 * each stream the hour holds, calls named by what they are for, the memory size from the peak,
 * and the report's standing row and stream-hour section quoting the same hour.
 */
import { describe, expect, it } from 'vitest';
import { BEFORE_MEMORY_MB, callPurpose, cpuAgainstReference, cpuAgainstReferenceOver, DEPLOYED_STREAM, hourOf, sizeFromPeak, STREAMS_PER_HOUR, streamHourOf } from '../../bench/sse-stream-hour-model.ts';
import type { CallRecord, StreamProcessReport } from '../../bench/sse-stream-hour-model.ts';
import { sseStandingCells, sseStreamHourLines, usd } from '../../bench/sse-stream-hour-report.ts';
import { PRICES } from '../../bench/prices.ts';

const call = (phase: CallRecord['phase'], command: string, table: string, kind: CallRecord['kind'], consistent: boolean, billedUnits: number): CallRecord => ({ phase, command, table, kind, consistent, billedUnits });
const times = (count: number, record: CallRecord) => Array.from({ length: count }, () => record);

/** 120 s idle: 60 probes, 8 strong reads, 4 token re-checks, 3 renewals of 3 slots; setup 5 RRU and 9 WRU, cleanup 3 WRU. */
function report(overrides: Partial<StreamProcessReport> = {}): StreamProcessReport {
  return {
    variant: 'after',
    calls: [
      ...times(5, call('setup', 'GetItemCommand', 'tenants', 'read', true, 1)),
      ...times(9, call('setup', 'UpdateItemCommand', 'connections', 'write', false, 1)),
      ...times(60, call('idle', 'QueryCommand', 'connections', 'read', false, 0.5)),
      ...times(8, call('idle', 'QueryCommand', 'connections', 'read', true, 1)),
      ...times(4, call('idle', 'GetItemCommand', 'tenants', 'read', true, 1)),
      ...times(9, call('idle', 'UpdateItemCommand', 'connections', 'write', false, 1)),
      ...times(40, call('burst', 'QueryCommand', 'connections', 'read', true, 2)),
      ...times(3, call('cleanup', 'DeleteItemCommand', 'connections', 'write', false, 1)),
    ],
    phaseMs: { setup: 300, idle: 120_000, burst: 4000, cleanup: 50 },
    delivered: 300,
    heartbeats: 8,
    idleBytes: 8 * 16_400,
    rss: { atStartMb: 70, beforeStreamMb: 70.5, peakMb: 85, peakHeapUsedMb: 18 },
    burstCpuMs: 90,
    // Three slices of 50 deliveries at 0.3 ms each between four reference slices at 0.01 ms an
    // event, but the second slice spoiled (a burst of other work on the cores): 0.9 ms.
    cpuSlices: [
      { deliveries: 50, cpuMs: 15, reads: 2, calls: 5 },
      { deliveries: 50, cpuMs: 45, reads: 2, calls: 5 },
      { deliveries: 50, cpuMs: 15, reads: 2, calls: 5 },
    ],
    referenceSlices: [
      { events: 2000, cpuMs: 20 },
      { events: 2000, cpuMs: 20 },
      { events: 2000, cpuMs: 20 },
      { events: 2000, cpuMs: 20 },
    ],
    ...overrides,
  };
}

describe('SSE stream-hour', () => {
  it('scales the idle phase to an hour and adds the setup and cleanup of each stream the hour holds, the burst left out', () => {
    const row = hourOf(report(), 128);
    expect(STREAMS_PER_HOUR).toBe(3600 / (DEPLOYED_STREAM.idleEndMs / 1000));
    // Idle reads 30 + 8 + 4 = 42 units in 120 s: 1,260 an hour; setup 5 a stream.
    expect(row.readUnits).toBeCloseTo(42 * 30 + 5 * STREAMS_PER_HOUR);
    expect(row.writeUnits).toBeCloseTo(9 * 30 + 12 * STREAMS_PER_HOUR);
    expect(row.idleCallsPerHour).toBeCloseTo(81 * 30);
    expect(row.heartbeatsPerHour).toBeCloseTo(240);
    expect(row.idleBytesPerHour).toBeCloseTo(8 * 16_400 * 30);
    expect(row.usd.lambdaDuration).toBeCloseTo(3600 * (128 / 1024) * PRICES.lambdaArmGbSecond.usd, 10);
    expect(row.usd.lambdaRequests).toBeCloseTo((STREAMS_PER_HOUR * PRICES.lambdaRequest.usd) / 1e6, 12);
    expect(row.usd.total).toBeCloseTo(row.usd.lambdaDuration + row.usd.lambdaRequests + row.usd.dynamoReads + row.usd.dynamoWrites, 12);
  });

  it('names each idle-phase call by what it is for: inbox probe and read, token re-check, slot renewal', () => {
    const byCall = Object.fromEntries(hourOf(report(), 128).byCommand.map((entry) => [entry.call, entry]));
    expect(Object.keys(byCall).sort()).toEqual(['inbox probe (Query, eventual)', 'inbox read (Query, strong)', 'slot renewal (UpdateItem)', 'token re-check (GetItem, strong)']);
    expect(byCall['inbox probe (Query, eventual)']).toEqual({ call: 'inbox probe (Query, eventual)', callsPerHour: 1800, unitsPerHour: 900 });
    expect(byCall['slot renewal (UpdateItem)']?.callsPerHour).toBeCloseTo(270);
    expect(callPurpose({ command: 'ScanCommand', kind: 'read', consistent: false })).toBe('Scan, eventual');
  });

  it('sizes the memory from the peak RSS and half again in 64 MB steps, at least 128 MB', () => {
    expect(sizeFromPeak(40)).toBe(128);
    expect(sizeFromPeak(85)).toBe(128);
    expect(sizeFromPeak(90)).toBe(192);
    expect(sizeFromPeak(200)).toBe(320);
  });

  it('prices before at the previous 512 MB and after at the size the stack sets, and states CPU beside its yardstick', () => {
    const hour = streamHourOf(report({ variant: 'before', rss: { atStartMb: 70, beforeStreamMb: 70.5, peakMb: 86, peakHeapUsedMb: 18 } }), report(), 128, { measuredAt: '2026-12-02T00:00:00.000Z', commit: 'abc', idleSeconds: 120, burstEvents: 300 });
    expect(hour.hour.before.memoryMb).toBe(BEFORE_MEMORY_MB);
    expect(hour.hour.after.memoryMb).toBe(128);
    // Sized from the after stream, the one the function runs: not from before's 86 MB.
    expect(hour.memory.peakRssMb).toBe(hour.memory.after.peakMb);
    expect(hour.memory.peakRssMb).not.toBe(86);
    // The median slice ÷ the median reference: the spoiled slice is on record, not in the figure.
    expect(hour.memory.cpuMsPerDelivery).toBeCloseTo(0.3);
    expect(hour.memory.cpuRatioToReference).toBeCloseTo(30);
    expect(hour.memory.cpuPairRatios?.map((ratio) => Math.round(ratio))).toEqual([30, 90, 30]);
    expect(hour.memory.cpuSliceCalls).toBe(5);
    expect(sseStreamHourLines(hour).join('\n')).toContain("**CPU per delivery: 30.0× the reference pipeline's CPU per event**");
    expect(hour.settings).toMatchObject({ pollMs: 250, idlePollMs: 2000, backoffAfterPolls: 8, revalidateMs: 30_000, slotLeaseMs: 120_000, idleSeconds: 120 });
  });

  it('takes the median slice against the median reference slice, each pair against the references either side of it on record', () => {
    // Slices at 0.2, 0.2 and 0.4 ms a delivery; references at 0.01, 0.03, 0.01 and 0.01 ms an event.
    const cpu = cpuAgainstReference({
      cpuSlices: [
        { deliveries: 50, cpuMs: 10 },
        { deliveries: 50, cpuMs: 10 },
        { deliveries: 50, cpuMs: 20 },
      ],
      referenceSlices: [
        { events: 1000, cpuMs: 10 },
        { events: 1000, cpuMs: 30 },
        { events: 1000, cpuMs: 10 },
        { events: 1000, cpuMs: 10 },
      ],
    });
    // 0.2 ms ÷ 0.01 ms; the pairs' own ratios (0.2 against (0.01 + 0.03) / 2, ...) would give a median of 10.
    expect(cpu?.ratio).toBeCloseTo(20);
    expect(cpu?.pairRatios.map((ratio) => Math.round(ratio))).toEqual([10, 10, 40]);
    expect(cpu?.slicesMsPerDelivery).toEqual([0.2, 0.2, 0.4]);
    expect(cpuAgainstReference({ cpuSlices: [{ deliveries: 50, cpuMs: 10 }], referenceSlices: [{ events: 1000, cpuMs: 10 }] })).toBeUndefined();
    // Without the CPU phase: the burst's CPU, and no ratio.
    const hour = streamHourOf(report(), report({ cpuSlices: undefined, referenceSlices: undefined }), 128, { measuredAt: '2026-12-02T00:00:00.000Z', idleSeconds: 120, burstEvents: 300 });
    expect(hour.memory.cpuMsPerDelivery).toBeCloseTo(0.3);
    expect(hour.memory.cpuRatioToReference).toBeUndefined();
  });

  it('takes the CPU figure over several stream processes as the mean of each process\'s own ratio, every slice on record', () => {
    const phase = (sliceMs: number, referenceMs: number) => ({
      cpuSlices: [1, 2, 3].map(() => ({ deliveries: 50, cpuMs: sliceMs })),
      referenceSlices: [1, 2, 3, 4].map(() => ({ events: 1000, cpuMs: referenceMs })),
    });
    // A process whose reference ran slow (the compiled form it kept) reads 20×, the others 30×.
    const cpu = cpuAgainstReferenceOver([phase(15, 10), phase(15, 15), phase(15, 10)]);
    expect(cpu?.processRatios.map((ratio) => Math.round(ratio))).toEqual([30, 20, 30]);
    expect(cpu?.ratio).toBeCloseTo(80 / 3);
    expect(cpu?.msPerDelivery).toBeCloseTo(0.3);
    expect(cpu?.pairRatios).toHaveLength(9);
    expect(cpuAgainstReferenceOver([phase(15, 10), { cpuSlices: undefined, referenceSlices: undefined }])).toBeUndefined();
    const hour = streamHourOf(report({ variant: 'before' }), report(), 128, { measuredAt: '2026-12-02T00:00:00.000Z', idleSeconds: 120, burstEvents: 300 }, [report()]);
    expect(hour.memory.cpuProcessRatios).toHaveLength(2);
    expect(sseStreamHourLines(hour).join('\n')).toContain('the figure the mean of the 2');
  });

  it('gives the standing table and the stream-hour section the same hour, with the deployed poll settings', () => {
    const hour = streamHourOf(report({ variant: 'before' }), report(), 128, { measuredAt: '2026-12-02T00:00:00.000Z', idleSeconds: 120, burstEvents: 300 });
    const [measured, perHour] = sseStandingCells(hour);
    const section = sseStreamHourLines(hour).join('\n');
    expect(perHour).toContain(`**${usd(hour.hour.after.usd.total)}**`);
    expect(section).toContain(`**${usd(hour.hour.after.usd.total)}**`);
    expect(section).toContain(`**${usd(hour.hour.before.usd.total)}**`);
    for (const text of [measured, section]) {
      expect(text).toContain('inbox poll every 250 ms, backing off after 8 empty reads to one every 2,000 ms');
      expect(text).toContain('token re-check every 30 s; slot lease 120 s renewed every 40 s');
    }
  });
});
