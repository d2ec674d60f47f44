/**
 * The bench's derived figures: units as billed, ingest and delivery reads kept apart, the
 * modelled Lambda duration, and the same-run yardsticks (CPU reference, stand-in post loop,
 * a saturated stack reported as such).
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../local/usage.ts';
import type { FunctionUsage, StackUsage } from '../../local/usage.ts';
import type { CostRun } from '../../bench/cost.ts';
import { alternate, referencePipeline } from '../../bench/cpu-reference.ts';
import { combineRepeats } from '../../bench/cpu.ts';
import type { CpuResult } from '../../bench/cpu.ts';
import { AWS_DYNAMO_CALL_MS, AWS_POST_MS, modelledGbSeconds } from '../../bench/duration-model.ts';
import { cpuStandInRatio, longestToStandIn, medianOfPairs, middleGeometricMean, standInLatencyRatio, standInRatio } from '../../bench/fanout-scale.ts';
import { pairCounts, renderScaleMarkdown } from '../../bench/scale-report.ts';
import type { FanoutScaleRun } from '../../bench/fanout-scale.ts';
import { medianRatios, stackSaturated } from '../../bench/paused-consumer.ts';
import { distribution as latencyDistribution, medianOfRepeats, poissonGapMs } from '../../bench/latency.ts';
import type { PausedConsumerResult, PausedConsumerRun } from '../../bench/paused-consumer.ts';
import { derive } from '../../bench/results-model.ts';
import type { BenchResults } from '../../bench/results-model.ts';
import { withEveryFunction } from '../../bench/outputs.ts';

const fn = (overrides: Partial<FunctionUsage> = {}): FunctionUsage => ({ invocations: 0, completed: 0, errors: 0, durationMs: 0, billedMs: 0, maxDurationMs: 0, readUnits: 0, writeUnits: 0, dynamoCalls: 0, emptyReads: 0, emptyReadUnits: 0, refusedWrites: 0, refusedWriteUnits: 0, ...overrides });

function usageOf(functions: Partial<Record<(typeof FUNCTION_NAMES)[number], FunctionUsage>>, posts: number): StackUsage {
  const all = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, functions[name] ?? fn()])) as StackUsage['functions'];
  const sum = (key: keyof FunctionUsage) => Object.values(all).reduce((total, usage) => total + usage[key], 0);
  return {
    functions: all,
    socketRoutes: {},
    fanoutRecords: 100,
    fanoutLongestInvocationPosts: 100,
    postToConnection: { calls: posts, byStatus: { '200': posts } },
    dynamo: { readUnits: sum('readUnits'), writeUnits: sum('writeUnits'), calls: sum('dynamoCalls'), emptyReads: sum('emptyReads'), emptyReadUnits: sum('emptyReadUnits'), refusedWrites: sum('refusedWrites'), refusedWriteUnits: sum('refusedWriteUnits') },
  };
}

describe('bench figures', () => {
  // 100 events in one NDJSON request to 10 subscribers: 1 token read, 1,000 deliveries, fan-out 5 calls of which 3 found nothing.
  const usage = usageOf(
    {
      http: fn({ invocations: 1, billedMs: 40, readUnits: 1, writeUnits: 100, dynamoCalls: 101, refusedWrites: 1, refusedWriteUnits: 1 }),
      fanout: fn({ invocations: 1, billedMs: 10, readUnits: 2, dynamoCalls: 5, emptyReads: 3, emptyReadUnits: 3 }),
    },
    1000,
  );
  const run: CostRun = { ingest: 'batch100', subscribers: 10, mix: { sessionMatching: 1, sessionOther: 4, typeFiltered: 5 }, events: 100, expectedDeliveries: 1000, receivedDeliveries: 1000, wallMs: 1000, usage, setup: usage };

  it('keeps ingest reads per event apart from fan-out reads per delivery, empty reads and refused writes at their billed minimum', () => {
    const row = derive(run, { concurrency: 256, cpuMsPerDelivery: 0 });
    expect(row.ingestReadUnitsPerEvent).toBeCloseTo(0.01);
    expect(row.fanoutReadUnitsPerDelivery).toBeCloseTo(5 / 1000);
    expect(row.writeUnitsPerEvent).toBeCloseTo(1.01);
    expect(row.readUnits).toBeCloseTo(60);
    expect(row.emptyReads).toBe(30);
    expect(row.refusedWrites).toBe(10);
    expect(row.dynamoCalls).toBe(1060);
  });

  it('models fan-out duration from posts in flight at the AWS post latency, or the measured CPU per delivery when that is slower', () => {
    const posting = (1000 * AWS_POST_MS) / 256;
    const fanoutMs = 5 * AWS_DYNAMO_CALL_MS + posting + 1;
    const httpMs = Math.min(40, 101 * AWS_DYNAMO_CALL_MS + 1);
    expect(modelledGbSeconds(usage, { concurrency: 256, cpuMsPerDelivery: 0 })).toBeCloseTo((fanoutMs / 1000) * 0.5 + (httpMs / 1000) * 0.5, 6);
    const cpuBound = 5 * AWS_DYNAMO_CALL_MS + 1000 * 0.2 + 1;
    expect(modelledGbSeconds(usage, { concurrency: 256, cpuMsPerDelivery: 0.2 })).toBeCloseTo((cpuBound / 1000) * 0.5 + (httpMs / 1000) * 0.5, 6);
  });

  it('states fan-out against the stand-in loop of the same run, and a paused-consumer run with a lagging healthy consumer as a saturated stack', () => {
    const latency = { count: 1, min: 100, p50: 100, p95: 100, p99: 100, max: 100, mean: 100 };
    const scale = { deliveriesPerSecond: 2000, standInPerSecond: 2500, latency } as FanoutScaleRun;
    expect(standInRatio(scale)).toBeCloseTo(0.8);
    expect(standInRatio({ deliveriesPerSecond: 2000, latency } as FanoutScaleRun)).toBeUndefined();
    const distribution = (p50: number) => ({ count: 1, min: p50, p50, p95: p50, p99: p50, max: p50, mean: p50 });
    const paused = (p50: number): PausedConsumerRun => ({ healthyAlone: distribution(p50), healthyBesidePaused: distribution(p50), paused: { eventsReceived: 0, closingReceived: true, closingMatchesLastEvent: true, closedAfterClosing: true, closeCode: 1000 } });
    expect(stackSaturated(paused(3000), 100)).toBe(true);
    expect(stackSaturated(paused(120), 100)).toBe(false);
  });

  it('states the paused consumer as the median of its runs\' own ratios, saturated runs left out, and no ratio when most runs were saturated', () => {
    const figures = (p50: number, p99 = p50) => ({ count: 1, min: p50, p50, p95: p50, p99, max: p99, mean: p50 });
    const closing = { eventsReceived: 0, closingReceived: true, closingMatchesLastEvent: true, closedAfterClosing: true, closeCode: 1000 };
    const run = (alone: number, beside: number): PausedConsumerRun => ({ healthyAlone: figures(alone, 2 * alone), healthyBesidePaused: figures(beside, 2 * beside), paused: closing });
    const result = (runs: PausedConsumerRun[]): PausedConsumerResult => ({ events: 10, eventBytes: 10, batch: 1, paceMs: 100, ...(runs[0] as PausedConsumerRun), runs });
    // One stalled run (3×) does not move the median; the saturated run (p50 alone over 1 s) is not counted.
    const ratios = medianRatios(result([run(100, 110), run(100, 300), run(200, 220), run(2000, 8000), run(100, 105)]));
    expect(ratios?.p50).toBeCloseTo(1.1);
    expect(ratios?.p99).toBeCloseTo(1.1);
    expect(medianRatios(result([run(2000, 2000), run(3000, 3000), run(100, 110)]))).toBeUndefined();
  });

  it('paces latency POSTs as Poisson arrivals, which sample every phase of a poll cycle that a fixed pace locks to a few of', () => {
    let state = 42;
    const seeded = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const phases = (gap: () => number) => {
      let at = 0;
      return Array.from({ length: 500 }, () => ((at += gap()) % 120) / 120);
    };
    const tenths = (values: number[]) => new Set(values.map((phase) => Math.floor(phase * 10))).size;
    // 30 ms a POST against a 120 ms cycle: four phases, the same ones all run long.
    expect(new Set(phases(() => 30).map((phase) => phase.toFixed(6))).size).toBe(4);
    const poisson = phases(() => poissonGapMs(30, seeded));
    expect(tenths(poisson)).toBe(10);
    for (let tenth = 0; tenth < 10; tenth += 1) expect(poisson.filter((phase) => Math.floor(phase * 10) === tenth).length).toBeGreaterThan(25);
    const gaps = Array.from({ length: 2000 }, () => poissonGapMs(30, seeded));
    expect(gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length).toBeGreaterThan(27);
    expect(gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length).toBeLessThan(33);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(150);
  });

  it('takes each latency figure as the median of the repeats\' own, the samples pooled', () => {
    const steady = (offset: number) => latencyDistribution(Array.from({ length: 100 }, (_, index) => 100 + index + offset));
    const stalled = latencyDistribution([...Array.from({ length: 90 }, (_, index) => 100 + index), ...Array.from({ length: 10 }, () => 5000)]);
    const combined = medianOfRepeats([steady(0), stalled, steady(2)]);
    expect(combined.count).toBe(300);
    expect(combined.samples).toHaveLength(300);
    expect(combined.p99).toBe(steady(2).p99);
    expect(combined.p50).toBe(steady(0).p50);
    expect(medianOfRepeats([stalled])).toBe(stalled);
  });

  it('takes a fan-out scale row from its relay/stand-in pairs: this machine\'s figures their medians, each ratio the geometric mean of the pairs\' own, each pair kept', () => {
    const pair = (rate: number, standIn: number, invocations: number, longest: number): FanoutScaleRun => {
      const latency = { count: 1000, min: 10, p50: 100_000 / rate, p95: 180_000 / rate, p99: 200_000 / rate, max: 210_000 / rate, mean: 100_000 / rate };
      return { postDelayMs: 20, subscribers: 100, events: 10, expectedDeliveries: 1000, deliveries: 1000, deliveriesPerSecond: rate, latency, fanoutInvocations: invocations, longestInvocationMs: longest, timeoutMs: 60_000, concurrency: 256, processCpuMs: 100, deliveriesPerCpuSecond: 10_000, standInPerSecond: standIn, standInLatency: { p50: 50, p99: 90 }, standInCpuMsPerDelivery: 0.05 };
    };
    // The middle pair's batches split in 3 where the others split in 2; one pair ran during a stall.
    const row = medianOfPairs([pair(4000, 7000, 2, 2000), pair(1500, 6800, 2, 6000), pair(3800, 7100, 3, 2400)]);
    expect(row.deliveriesPerSecond).toBe(3800);
    expect(row.standInPerSecond).toBe(7000);
    // The ratio is each pair's own, combined by their geometric mean: not the ratio of the medians.
    expect(standInRatio(row)).toBeCloseTo(Math.cbrt((4000 / 7000) * (1500 / 6800) * (3800 / 7100)));
    expect(standInRatio({ ...row, pairs: undefined })).toBeCloseTo(3800 / 7000);
    // Latency: every pair 100,000 / rate ÷ the stand-in's 50 ms at p50, combined without the
    // highest and the lowest (of three, the median: the stalled pair's 1.33× does not move it):
    // 0.50×, 1.33×, 0.53×.
    expect(standInLatencyRatio(row)?.p50).toBeCloseTo(100_000 / 3800 / 50);
    expect(row.latency.p99).toBeCloseTo(200_000 / 3800);
    expect(row.fanoutInvocations).toBe(2);
    expect(row.longestInvocationMs).toBe(2400);
    expect(row.repeats).toBe(3);
    expect(row.pairs?.map((one) => one.deliveriesPerSecond)).toEqual([4000, 1500, 3800]);
    const single = pair(4000, 7000, 2, 2000);
    expect(medianOfPairs([single])).toBe(single);
    const big = { ...row, subscribers: 1000, repeats: 3 };
    expect(pairCounts([row, big])).toBe('3 relay/stand-in pairs');
    expect(pairCounts([{ ...row, repeats: 5 }, big, { ...big, subscribers: 5000 }])).toBe('5 relay/stand-in pairs at 100 subscribers and 3 at 1,000 and 5,000');
  });

  it('combines five pairs\' latency ratios as the geometric mean of the middle three', () => {
    // One stalled pair (1.37×) and one quick one (0.94×) are set aside; the rest are averaged.
    expect(middleGeometricMean([1.37, 1.11, 0.94, 1.05, 1.11])).toBeCloseTo(Math.cbrt(1.11 * 1.05 * 1.11));
    expect(middleGeometricMean([2, 0.5, 1])).toBe(1);
    expect(middleGeometricMean([2, 0.5])).toBeCloseTo(1);
    expect(middleGeometricMean([1.2])).toBeCloseTo(1.2);
  });

  it('states fan-out latency, CPU per delivery and the longest invocation against same-run yardsticks', () => {
    const latency = { count: 1, min: 100, p50: 300, p95: 500, p99: 600, max: 700, mean: 320 };
    const scale = { postDelayMs: 20, subscribers: 100, events: 10, expectedDeliveries: 1000, deliveries: 1000, deliveriesPerSecond: 2000, latency, fanoutInvocations: 1, longestInvocationMs: 450, longestInvocationPosts: 1000, timeoutMs: 60_000, concurrency: 256, processCpuMs: 200, standInPerSecond: 2500, standInLatency: { p50: 200, p99: 400 }, standInCpuMsPerDelivery: 0.08 } satisfies FanoutScaleRun;
    expect(standInLatencyRatio(scale)).toEqual({ p50: 1.5, p99: 1.5 });
    // 0.2 ms of CPU per delivery against the stand-in's 0.08 ms.
    expect(cpuStandInRatio(scale)).toBeCloseTo(2.5);
    // The longest invocation made all 1,000 deliveries: the stand-in posts as many in 400 ms.
    expect(longestToStandIn(scale)).toBeCloseTo(1.125);
    // The same rate with the events split in two batches: half the deliveries in half the time, the same ratio.
    expect(longestToStandIn({ ...scale, longestInvocationMs: 225, longestInvocationPosts: 500 })).toBeCloseTo(1.125);
    const { standInLatency: _latency, standInCpuMsPerDelivery: _standInCpu, longestInvocationPosts: _posts, ...old } = scale;
    expect(standInLatencyRatio(old)).toBeUndefined();
    expect(cpuStandInRatio(old)).toBeUndefined();
    expect(longestToStandIn(old)).toBeUndefined();
    const table = renderScaleMarkdown([scale], undefined).join('\n');
    expect(table).toContain('| **0.80×** (posting-limited) | **1.50× / 1.50×** | **2.50×** |');
    expect(table).toContain('| 1 | **1.13×** | 0.5 s, 1% |');
  });

  it('fills functions missing from older results in a copy for the report, what was measured left as it was', () => {
    const old = { ...usage, functions: { http: usage.functions.http, fanout: usage.functions.fanout } } as unknown as StackUsage;
    const results = { costGrid: [{ ...run, usage: old, setup: old }] } as unknown as BenchResults;
    const before = JSON.stringify(results);
    const filled = withEveryFunction(results);
    expect(Object.keys(filled.costGrid[0]?.usage.functions ?? {}).sort()).toEqual([...FUNCTION_NAMES].sort());
    expect(filled.costGrid[0]?.usage.functions.sinkretry.invocations).toBe(0);
    expect(filled.costGrid[0]?.setup.functions.fanoutlane.invocations).toBe(0);
    expect(JSON.stringify(results)).toBe(before);
  });

  it('times a subject and the reference pipeline in alternation', () => {
    const texts = ['{"a":1,"b":["x","yz"]}', '{"c":{"d":"e"}}'];
    expect(referencePipeline(texts)).toBeGreaterThan(0);
    const timed = alternate(() => referencePipeline(texts), () => referencePipeline(texts), 5, 4);
    expect(timed.subjectMsPerRound).toBeGreaterThan(0);
    expect(timed.referenceMsPerRound).toBeGreaterThan(0);
  });

  it('takes the CPU stage as the median repeat by pipeline ratio, each stage\'s ratio the mean over the repeats', () => {
    const repeat = (pipelineRatio: number, match100: number): CpuResult => ({
      corpus: 'golden.jsonl', corpusEvents: 10, filters: 100, ceilings: {}, rounds: 1, eventsProcessed: 10, matchesPerEvent: 1, downlevelsPerEvent: 0,
      usPerEvent: { parseAndValidate: 1, match100: 1, deliveryText: 1, pipeline: pipelineRatio * 2 },
      reference: { usPerEvent: 2, pipelineRatio, stageRatios: { parseAndValidate: 1.7, match100, deliveryText: 2.5 } },
    });
    // Two processes settled on the slower compiled form of the matcher calls, three on the faster.
    const combined = combineRepeats([repeat(6.4, 1.44), repeat(6.3, 1.26), repeat(6.5, 1.44), repeat(6.2, 1.26), repeat(6.35, 1.26)], { loads: [0.3, 0.4, 0.4, 0.5, 0.5], loadAfter: 0.6 });
    expect(combined.reference?.pipelineRatio).toBe(6.35);
    expect(combined.reference?.stageRatios?.match100).toBeCloseTo((2 * 1.44 + 3 * 1.26) / 5, 10);
    expect(combined.reference?.stageRatios?.parseAndValidate).toBeCloseTo(1.7, 10);
    expect(combined.repeats?.pipelineRatio).toEqual([6.4, 6.3, 6.5, 6.2, 6.35]);
    expect(combined.repeats?.loadAfter).toBe(0.6);
  });
});
