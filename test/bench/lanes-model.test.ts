import { describe, expect, it } from 'vitest';
import type { LanesRun, LanesStageResult } from '../../bench/fanout-lanes.ts';
import { eventsFor, roundOrder } from '../../bench/fanout-lanes.ts';
import { LAMBDA_SYNC_PAYLOAD_BYTES, laneWorkBytes } from '../../bench/lane-work-size.ts';
import { cpuMsPerDelivery, lanesMarkdown, lanesModel, lanesRatios, modelRun, postingBound, ratioToOne } from '../../bench/lanes-report.ts';
import { groupRepeats, medianRun, pooledDeliveriesPerCpuSecond } from '../../bench/lanes-repeats.ts';

const target = { subscribers: 10_000, eventsPerSecond: 50, postsPerLane: 256, laneMemoryMb: 1024, cpuMsPerDelivery: 0.025, batchFixedMs: 200 };

describe('lanesModel', () => {
  it('at a 20 ms post: every connection always busy, so no lane count keeps up', () => {
    const model = lanesModel({ ...target, postMs: 20 });
    expect(model.deliveriesPerSecond).toBe(500_000);
    expect(model.postsInFlight).toBeCloseTo(10_000, 6);
    expect(model.connectionBusy).toBeCloseTo(1, 9);
    expect(model.laneVcpu).toBeCloseTo(1024 / 1769, 9);
    expect(model.latencyBoundPerLane).toBeCloseTo(12_800, 6);
    expect(model.cpuBoundPerLane).toBeCloseTo(1024 / 1769 / 0.000025, 3);
    expect(model.ratePerLane).toBeCloseTo(12_800, 6);
    expect(model.lanesToCarry).toBe(40);
    expect(model.lanes).toBe(80);
    expect(model.sustainable).toBe(false);
    // Batches at their 100-record cap: F + 100 records × 20 ms per connection.
    expect(model.recordsPerBatch).toBe(100);
    expect(model.batchMs).toBeCloseTo(2200, 6);
    expect(model.p99Ms).toBe(Number.POSITIVE_INFINITY);
    expect(model.laneGbSecondsPerMillion).toBeCloseTo(78.125, 6);
    expect(model.laneInvocationsPerMillion).toBeCloseTo(79, 9);
    expect(model.dollarsPerMillion.laneDuration).toBeCloseTo(78.125 * 0.0000133334, 12);
    expect(model.dollarsPerMillion.laneRequests).toBeCloseTo((79 * 0.2) / 1e6, 12);
    expect(model.dollarsPerMillion.websocketMessages).toBe(1);
    expect(model.dollarsPerMillion.total).toBeCloseTo(1 + 78.125 * 0.0000133334 + (79 * 0.2) / 1e6, 12);
    expect(model.apiGatewayRps).toBe(500_000);
    expect(model.apiGatewayQuotaMultiple).toBe(50);
  });

  it('at a 10 ms post: CPU-bound lanes, half busy, D = F ÷ (1 − 0.5) and p99 ≈ 2D', () => {
    const model = lanesModel({ ...target, postMs: 10 });
    const cpuBound = 1024 / 1769 / 0.000025;
    expect(model.connectionBusy).toBeCloseTo(0.5, 9);
    expect(model.latencyBoundPerLane).toBeCloseTo(25_600, 6);
    expect(model.ratePerLane).toBeCloseTo(cpuBound, 6);
    expect(model.lanesToCarry).toBe(Math.ceil(500_000 / cpuBound));
    expect(model.lanes).toBe(44);
    expect(model.sustainable).toBe(true);
    expect(model.batchMs).toBeCloseTo(400, 6);
    expect(model.recordsPerBatch).toBeCloseTo(20, 9);
    expect(model.p99Ms).toBeCloseTo(800, 6);
    expect(model.laneGbSecondsPerMillion).toBeCloseTo(1e6 / cpuBound, 6);
    expect(model.laneInvocationsPerMillion).toBeCloseTo((43 * 1e6) / (20 * 10_000), 9);
  });

  it('a batch that would outgrow 100 records is capped, and falls behind when 100 records take longer than they arrive', () => {
    const model = lanesModel({ ...target, postMs: 10, batchFixedMs: 1500 });
    expect(model.recordsPerBatch).toBe(100);
    expect(model.batchMs).toBeCloseTo(1500 + 100 * 10, 6);
    expect(model.sustainable).toBe(false);
    expect(model.p99Ms).toBe(Number.POSITIVE_INFINITY);
  });

  it('without a measured CPU per delivery the lanes are bound by posts in flight only', () => {
    const model = lanesModel({ ...target, postMs: 10, cpuMsPerDelivery: 0 });
    expect(model.cpuBoundPerLane).toBe(Number.POSITIVE_INFINITY);
    expect(model.ratePerLane).toBeCloseTo(25_600, 6);
    expect(model.lanesToCarry).toBe(20);
  });
});

function run(workers: number, subscribers: number, deliveriesPerSecond: number, over: Partial<LanesRun> = {}): LanesRun {
  return {
    workers,
    subscribers,
    events: 10,
    expectedDeliveries: 10 * subscribers,
    deliveries: 10 * subscribers,
    deliveriesPerSecond,
    firstDeliveryMs: 150,
    latency: { count: 10 * subscribers, min: 150, p50: 900, p95: 1500, p99: 1800, max: 1900, mean: 950 },
    fanoutInvocations: 1,
    laneInvocations: workers - 1,
    laneFailures: 0,
    deliveriesByProcess: { fanout: 10 * subscribers },
    cpuMs: { stack: 2000, laneWorkers: 500 * (workers - 1), dynamoDbLocal: 300, machine: 3000 },
    windowMs: 2000,
    deliveriesPerCpuSecond: 40_000,
    loadBefore: 0.5,
    ...over,
  };
}

describe('laneWorkBytes', () => {
  it('is the relay\'s own encoding, and a full batch to 10,000 subscribers in 8 lanes is over Lambda\'s synchronous payload', () => {
    const small = laneWorkBytes(2, 3);
    expect(small).toBeGreaterThan(0);
    expect(laneWorkBytes(4, 3)).toBeGreaterThan(small);
    expect(laneWorkBytes(100, 1250)).toBeGreaterThan(LAMBDA_SYNC_PAYLOAD_BYTES);
    expect(laneWorkBytes(20, 250)).toBeLessThan(LAMBDA_SYNC_PAYLOAD_BYTES / 10);
  });
});

describe('the measured figures', () => {
  const runs = [run(1, 1000, 10_000), run(2, 1000, 18_000), run(4, 1000, 31_000), run(1, 10_000, 9_000), run(4, 10_000, 27_000)];

  it('takes each rate against one delivering process at the same size', () => {
    expect(ratioToOne(runs, runs[2] as LanesRun)).toBeCloseTo(3.1, 9);
    expect(ratioToOne(runs, runs[4] as LanesRun)).toBeCloseTo(3, 9);
    expect(ratioToOne([run(4, 5000, 1)], run(4, 5000, 1))).toBeUndefined();
  });

  it('models from the run with the most subscribers and workers, the lane workers\' CPU included', () => {
    const chosen = modelRun(runs) as LanesRun;
    expect([chosen.subscribers, chosen.workers]).toEqual([10_000, 4]);
    expect(cpuMsPerDelivery(chosen)).toBeCloseTo((2000 + 1500) / 100_000, 12);
  });

  it('bounds each run by W × 256 posts in flight from its first delivery, or by one connection\'s posts in a row', () => {
    const settings = { concurrency: 256, postMs: 20 };
    // 100,000 deliveries by 4 × 12,800/s = 1.953 s after 150 ms; the 10 posts per connection take only 200 ms.
    expect(postingBound(run(4, 10_000, 1), settings)).toBeCloseTo(100_000 / (0.15 + 100_000 / 51_200), 6);
    // 100 events per connection in a row: 2 s, longer than 4 processes' 0.39 s for 20,000 deliveries.
    expect(postingBound(run(4, 200, 1, { events: 100, deliveries: 20_000 }), settings)).toBeCloseTo(20_000 / (0.15 + 2), 6);
  });

  it('runs the worker counts in rounds, their order rotated by one each round', () => {
    expect([1, 2, 3, 4].map((round) => roundOrder([1, 2, 4], round))).toEqual([
      [1, 2, 4],
      [2, 4, 1],
      [4, 1, 2],
      [1, 2, 4],
    ]);
  });

  it('spreads the same deliveries over every size', () => {
    expect([1000, 5000, 10_000].map((size) => eventsFor(100_000, size))).toEqual([100, 20, 10]);
    expect(eventsFor(1000, 10_000)).toBe(1);
  });

  it('renders every run with its ratio, and the model with the 20 ms post unbounded', () => {
    const result: LanesStageResult = {
      date: '2026-12-02T04:00:00.000Z',
      commit: 'abcdef0123',
      durationSeconds: 200,
      machineCores: 2,
      settings: { postMs: 20, laneDeliveries: 250, concurrency: 256, tenantDeliveriesPerBatch: 1_000_000, deliveriesPerRun: 100_000, pollMs: 100, workers: [1, 2, 4], subscribers: [1000, 10_000] },
      runs,
    };
    const text = lanesMarkdown(result).join('\n');
    expect(text).toContain('## Fan-out lanes at scale');
    expect(text).toContain('| 1,000 | 4 | 10 | 10,000 / 10,000 | **3.10×** |');
    // Results saved before the stage repeated its bursts: one run per (W, S), no range, no repeats claimed.
    expect(text).toContain('| 31,000 | 28,571 | 150 ms |');
    expect(text).toContain('One burst per (W, S)');
    expect(text).not.toContain('first delivery ÷ W = 1');
    expect(text).toContain('| 10,000 | 4 | 10 | 100,000 / 100,000 | **3.00×** |');
    expect(text).toContain('reached 3.00× to 3.10× the deliveries/s of one');
    expect(text).toMatch(/\| delivery p99 \| \*\*unbounded\*\* \| \*\*\d[\d,]* ms\*\* \|/);
    expect(text).toContain('in the default 8 lanes is 7.');
    expect(text).toContain('2 parts in a row');
    expect(text).toContain('500,000 deliveries/s needs a quota increase of that order (50× the default)');
    expect(text).toContain('were at most 1.50 busy during the runs (other work on the machine included), so the cores were not the limit');
    expect(lanesMarkdown(undefined)).toEqual([]);
  });

  it('states the median over each (W, S)\'s repeats, the ratios median ÷ median, and the spread of deliveries/s only as this machine\'s', () => {
    const repeated = [
      ...[10_000, 12_000, 11_000].map((rate, index) => run(1, 1000, rate, { repeat: index + 1, firstDeliveryMs: [150, 400, 200][index] as number })),
      ...[30_000, 36_000, 33_000].map((rate, index) => run(4, 1000, rate, { repeat: index + 1, firstDeliveryMs: [300, 120, 140][index] as number, fanoutInvocations: index === 0 ? 2 : 1 })),
    ];
    const result: LanesStageResult = {
      date: '2026-12-02T04:00:00.000Z',
      commit: 'abcdef0123',
      durationSeconds: 200,
      machineCores: 2,
      settings: { postMs: 20, laneDeliveries: 250, concurrency: 256, tenantDeliveriesPerBatch: 1_000_000, deliveriesPerRun: 10_000, pollMs: 100, workers: [1, 4], subscribers: [1000], repeats: 3 },
      runs: repeated,
    };
    expect(ratioToOne(repeated, repeated[3] as LanesRun)).toBeCloseTo(3, 9);
    const groups = groupRepeats(repeated);
    expect(groups.map((group) => [group.workers, group.repeats.length, group.median.deliveriesPerSecond, group.median.firstDeliveryMs])).toEqual([
      [1, 3, 11_000, 200],
      [4, 3, 33_000, 140],
    ]);
    const text = lanesMarkdown(result).join('\n');
    expect(text).toContain('every figure below is the median over the 3 repeats');
    expect(text).toContain('the median at W ÷ the median at W = 1');
    // Median 33,000 ÷ median 11,000; the repeats' range beside this machine's median; invocation counts as they were.
    expect(text).toContain('| 1,000 | 4 | 10 | 10,000 / 10,000 | **3.00×** |');
    expect(text).toContain('| 33,000 (30,000–36,000) |');
    expect(text).toContain('| 140 ms |');
    expect(text).toContain('| 1–2 / 3 |');
    expect(text).toContain('over the 3 repeats together with 1,000 subscribers and W = 4');
    // No ratio of anything per repeat.
    expect(text).not.toMatch(/\*\*2\.73×\*\*|\*\*3\.27×\*\*/);
  });

  it('takes an even number of repeats\' median as the mean of the middle two, and totals lane failures', () => {
    const median = medianRun([run(2, 1000, 10_000, { laneFailures: 1 }), run(2, 1000, 14_000)]);
    expect(median.deliveriesPerSecond).toBe(12_000);
    expect(median.laneFailures).toBe(1);
    const single = run(2, 1000, 10_000);
    expect(medianRun([single])).toBe(single);
  });

  it('takes deliveries per CPU-second over the repeats\' totals, not the median of per-burst rates, and CPU as the mean per burst', () => {
    // Per burst: 10,000 deliveries over 100, 125 and 250 ms of delivering CPU (100k, 80k, 40k per CPU-s).
    const ones = [100, 125, 250].map((stack) => run(1, 1000, 11_000, { cpuMs: { stack, laneWorkers: 0, dynamoDbLocal: 30, machine: 300 } }));
    expect(pooledDeliveriesPerCpuSecond(ones)).toBeCloseTo(30_000 / 0.475, 6);
    const middle = medianRun(ones);
    expect(middle.cpuMs.stack).toBeCloseTo(475 / 3, 9);
    expect(middle.deliveriesPerCpuSecond).toBeCloseTo(30_000 / 0.475, 6);
    // The median of the rates would be 80,000; the ratio of totals is 63,158, as cpuMsPerDelivery of the median run says.
    expect(cpuMsPerDelivery(middle)).toBeCloseTo(475 / 30_000, 9);
    // W = 4 at half the CPU per delivery: ÷ W = 1 is 2×, whatever one burst's share.
    const fours = [40, 60, 137.5].map((stack) => run(4, 1000, 33_000, { cpuMs: { stack, laneWorkers: 0, dynamoDbLocal: 30, machine: 300 } }));
    expect(lanesRatios([...ones, ...fours], fours[0] as LanesRun).deliveriesPerCpuSecond).toBeCloseTo(2, 9);
    expect(pooledDeliveriesPerCpuSecond([])).toBe(0);
  });

  it('says how much of a busy machine was the delivering processes and how much other work', () => {
    const busy = runs.map((entry) => ({ ...entry, cpuMs: { ...entry.cpuMs, machine: 3800 } }));
    const result: LanesStageResult = {
      date: '2026-12-02T04:00:00.000Z',
      commit: 'abcdef0123',
      durationSeconds: 200,
      machineCores: 2,
      settings: { postMs: 20, laneDeliveries: 250, concurrency: 256, tenantDeliveriesPerBatch: 1_000_000, deliveriesPerRun: 100_000, pollMs: 100, workers: [1, 4], subscribers: [1000, 10_000] },
      runs: busy,
    };
    const text = lanesMarkdown(result).join('\n');
    // W = 4: (2,000 + 1,500) ms of the delivering processes and 300 ms of DynamoDB Local in a 2,000 ms window.
    expect(text).toContain('cores were up to 1.90 busy, of which the delivering processes 1.75 and DynamoDB Local 0.15 at most: the rest was other work on the machine');
    expect(text).not.toContain('was not the limit');
  });
});
