/**
 * The report's same-run yardsticks for the figures that were once this machine's only: latency
 * in poll periods of the run's settings, lanes figures ÷ W = 1 at the same size, one
 * invocation's capacity from relay ÷ stand-in × the modelled posting rate, and the duration
 * model's CPU floor against the reference pipeline.
 */
import { describe, expect, it } from 'vitest';
import { inPolls, latencyMarkdown, pollYardstick } from '../../bench/latency-report.ts';
import { lanesRatios } from '../../bench/lanes-report.ts';
import type { LanesRun } from '../../bench/fanout-lanes.ts';
import { capacityParagraph, carries, modelledInvocationRate } from '../../bench/scale-report.ts';
import type { FanoutScaleRun } from '../../bench/fanout-scale.ts';
import { cpuFloor } from '../../bench/results-model.ts';
import { floorClause } from '../../bench/report.ts';

const dist = (p50: number, p99: number) => ({ count: 10, min: p50 / 2, p50, p95: p99, p99, max: p99, mean: p50, samples: [] });

describe('report ratios', () => {
  const settings = { AEP_LOCAL_POLL_MS: 100, AEP_SSE_POLL_MS: 250 };

  it('states WebSocket and command latency in stream polls, SSE in stream + inbox polls', () => {
    expect(pollYardstick(settings, 'websocket')?.periodMs).toBe(100);
    expect(pollYardstick(settings, 'command')?.periodMs).toBe(100);
    expect(pollYardstick(settings, 'sse')?.periodMs).toBe(350);
    expect(inPolls(dist(80, 140), pollYardstick(settings, 'websocket'), 'p99')).toBeCloseTo(1.4);
    expect(inPolls(dist(175, 700), pollYardstick(settings, 'sse'), 'p50')).toBeCloseTo(0.5);
    expect(pollYardstick({}, 'websocket')).toBeUndefined();
    expect(pollYardstick({ AEP_LOCAL_POLL_MS: 100 }, 'sse')).toBeUndefined();
    const text = latencyMarkdown({ delivery: { paceMs: 30, websocket: dist(80, 140), sse: dist(175, 700) }, command: dist(90, 150) }, settings).join('\n');
    expect(text).toContain('| POST → SSE | 10 | 350 ms | **0.50×** | **2.00×** | **2.00×** |');
    expect(text).toContain('80 ms / 140 ms / 140 ms');
  });

  it('divides the lanes figures by W = 1 at the same size', () => {
    const run = (workers: number, subscribers: number, rate: number, first: number, p50: number, perCpu: number) =>
      ({ workers, subscribers, deliveries: 100_000, deliveriesPerSecond: rate, firstDeliveryMs: first, latency: dist(p50, 2 * p50), cpuMs: { stack: (100_000 / perCpu) * 1000, laneWorkers: 0 }, deliveriesPerCpuSecond: perCpu }) as unknown as LanesRun;
    const runs = [run(1, 1000, 10_000, 200, 4000, 60_000), run(4, 1000, 32_000, 100, 1000, 90_000), run(4, 5000, 30_000, 300, 1000, 90_000)];
    // No first-delivery ratio: one moment per burst, set by the stream poll, not by W.
    const single = lanesRatios(runs, runs[1] as LanesRun);
    expect(single).toMatchObject({ deliveriesPerSecond: 3.2, p50: 0.25, p99: 0.25 });
    expect(single.deliveriesPerCpuSecond).toBeCloseTo(1.5, 12);
    // No W = 1 at 5,000 subscribers: no yardstick, no ratio.
    expect(lanesRatios(runs, runs[2] as LanesRun).p50).toBeUndefined();
    // Repeats: deliveries/s the median at W ÷ the median at W = 1, never one repeat ÷ another;
    // latency the mean ÷ the mean (W = 4's p50 fell near 1 s twice and 1.7 s once: the median
    // would say 1 s); deliveries per CPU-second over each side's totals (every burst 100,000
    // deliveries: their harmonic mean).
    const repeated = [...runs, run(1, 1000, 12_000, 300, 5000, 50_000), run(1, 1000, 11_000, 250, 4500, 55_000), run(4, 1000, 30_000, 100, 900, 88_000), run(4, 1000, 33_000, 100, 1700, 100_000)];
    const ratios = lanesRatios(repeated, runs[1] as LanesRun);
    expect(ratios.deliveriesPerSecond).toBeCloseTo(32_000 / 11_000, 12);
    expect(ratios.p50).toBeCloseTo(1200 / 4500, 12);
    expect(ratios.p99).toBeCloseTo(2400 / 9000, 12);
    const totals = (rates: number[]) => (rates.length * 100_000) / rates.reduce((sum, rate) => sum + 100_000 / rate, 0);
    expect(ratios.deliveriesPerCpuSecond).toBeCloseTo(totals([90_000, 88_000, 100_000]) / totals([60_000, 50_000, 55_000]), 12);
  });

  it('sizes one invocation from relay ÷ stand-in × 256 posts in flight at 20 ms, never from this machine\'s rate', () => {
    const latency = { count: 1, min: 100, p50: 100, p95: 100, p99: 100, max: 100, mean: 100 };
    const scale = { postDelayMs: 20, subscribers: 5000, concurrency: 256, timeoutMs: 60_000, deliveriesPerSecond: 5000, standInPerSecond: 10_000, latency } as FanoutScaleRun;
    expect(modelledInvocationRate(scale)).toBeCloseTo(6400);
    // 6,400/s × 30 s ÷ 100 records.
    expect(carries(scale, 100, 30_000)).toBe(1920);
    expect(capacityParagraph([scale])).toContain('at most 1,920 matching subscribers (19,200 with batches of 10)');
    // Faster than its stand-in counts as the stand-in's rate, not more.
    expect(modelledInvocationRate({ ...scale, standInPerSecond: 4000 })).toBeCloseTo(12_800);
    const { standInPerSecond: _standIn, ...old } = scale;
    expect(carries(old, 100, 30_000)).toBeUndefined();
    expect(capacityParagraph([old])).toContain('see the AWS model under Fan-out lanes at scale');
  });

  it('states the duration model\'s CPU floor as a ratio to the stand-in loop\'s CPU when the run has it', () => {
    const run = (processCpuMs: number, standInCpuMsPerDelivery?: number) => ({ subscribers: 1000, postDelayMs: 20, deliveries: 1000, processCpuMs, standInCpuMsPerDelivery, latency: { count: 1, min: 100, p50: 100, p95: 100, p99: 100, max: 100, mean: 100 } }) as unknown as FanoutScaleRun;
    const floor = cpuFloor({ fanoutScale: [run(300, 0.08), run(200, 0.08)] });
    expect(floor?.msPerDelivery).toBeCloseTo(0.2);
    expect(floor?.standInRatio).toBeCloseTo(2.5);
    expect(floorClause(floor)).toContain('**2.50× the stand-in post loop\'s CPU per delivery**');
    expect(cpuFloor({ fanoutScale: [run(200)] })?.standInRatio).toBeUndefined();
    expect(floorClause(cpuFloor({ fanoutScale: [run(200)] }))).toContain('0.200 ms per delivery on this machine');
    expect(floorClause(cpuFloor({}))).toContain('not measured in these results');
  });
});
