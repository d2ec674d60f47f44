/**
 * The `npm run load` section: timed figures ÷ their same-run yardsticks (the offered rate, the
 * delivery rate the ingest implies, the stream poll), this machine's values beside, and runs
 * recorded before the yardsticks were (the previous-run column) still rendered, with –.
 */
import { describe, expect, it } from 'vitest';
import { existingLoadSection, loadRatios, loadSectionMarkdown, withLoadSection } from '../../bench/load-report.ts';
import type { LoadRun } from '../../bench/load-report.ts';

const run = (overrides: Partial<LoadRun> = {}): LoadRun => ({
  date: '2026-12-01T00:00:00.000Z',
  commit: 'abcdef0123456789',
  machine: { cpus: 2, model: 'Test CPU', memoryBytes: 1, node: 'v22' },
  consumers: 200,
  emitters: 20,
  targetEventsPerSecond: 100,
  seconds: 60,
  settings: { AEP_LOCAL_POLL_MS: 100, AEP_LOCAL_WS_JITTER_MS: 0, AEP_SOCKET_FRAMES_PER_SECOND: 0 },
  emitted: 5980,
  acknowledged: 5980,
  refused: 0,
  sustainedEventsPerSecond: 80,
  expectedDeliveries: 59800,
  delivered: 59800,
  duplicates: 0,
  deliveriesPerSecond: 600,
  latencyMs: { p50: 162, p95: 307, p99: 545, max: 898 },
  errors: 0,
  unexpectedCloses: 0,
  missingDeliveries: 0,
  peakStackRssMiB: 513,
  ...overrides,
});

/** A run as recorded before HTTP ingest and the ratios: no acknowledgements, no settings. */
const { settings: _settings, acknowledged: _acknowledged, refused: _refused, duplicates: _duplicates, ...olderRun } = run({ date: '2026-11-30T00:00:00.000Z', commit: '7defeab7e25d', latencyMs: { p50: 172, p95: 339, p99: 551, max: 581 } });

describe('load report', () => {
  it('divides each timed figure by its yardstick of the same run', () => {
    const ratios = loadRatios(run());
    expect(ratios.pollMs).toBe(100);
    expect(ratios.ingestOfTarget).toBeCloseTo(0.8);
    // 80 acknowledged/s × 10 consumers per session = 800 deliveries/s implied.
    expect(ratios.impliedDeliveriesPerSecond).toBe(800);
    expect(ratios.deliveriesOfImplied).toBeCloseTo(0.75);
    expect(ratios.latencyInPolls.p50).toBeCloseTo(1.62);
    expect(ratios.latencyInPolls.p99).toBeCloseTo(5.45);
    // The yardstick moves with the run's own poll.
    expect(loadRatios(run({ settings: { AEP_LOCAL_POLL_MS: 50, AEP_LOCAL_WS_JITTER_MS: 0, AEP_SOCKET_FRAMES_PER_SECOND: 0 } })).latencyInPolls.p50).toBeCloseTo(3.24);
  });

  it('gives no ratio where the run lacks the yardstick or the figure', () => {
    expect(loadRatios(olderRun)).toEqual({ pollMs: undefined, impliedDeliveriesPerSecond: undefined, ingestOfTarget: undefined, deliveriesOfImplied: undefined, latencyInPolls: { p50: undefined, p95: undefined, p99: undefined } });
    // A run with no delivery records its percentiles as null (JSON has no NaN).
    expect(loadRatios(run({ latencyMs: { p50: null, p95: null, p99: null, max: null } })).latencyInPolls.p50).toBeUndefined();
  });

  it('renders ratios with ×, this machine\'s values beside, and – for an older previous run', () => {
    const section = loadSectionMarkdown(run(), olderRun);
    expect(section).toContain('| **sustained ingest ÷ target rate** | **0.80×** | **–** |');
    expect(section).toContain('| **deliveries/s ÷ the rate the ingest implies** | **0.75×** | **–** |');
    expect(section).toContain('| yardstick: deliveries the ingest implies (acknowledged/s × consumers per session) | 800.0/s (80 × 10) | – |');
    expect(section).toContain('| **delivery latency p50 / p95 / p99 ÷ stream poll** | **1.62× / 3.07× / 5.45×** | **– / – / –** |');
    expect(section).toContain('| this machine: delivery latency p50 / p95 / p99 / max | 162 / 307 / 545 / 898 ms | 172 / 339 / 551 / 581 ms |');
    expect(section).toContain('| events sent / acknowledged (202) / refused | 5980 / 5980 / 0 | 5980 / – / – |');
    expect(section).toContain('previous run (commit `7defeab`');
    expect(section).toContain('`AEP_LOCAL_POLL_MS` = 100 ms');
    expect(section).not.toContain('no same-run yardstick');
    // Alone, one value column.
    expect(loadSectionMarkdown(run(), undefined)).toContain('| **sustained ingest ÷ target rate** | **0.80×** |\n');
  });

  it('replaces the section in BENCHMARKS.md, and the bench keeps it as it was written', () => {
    const section = loadSectionMarkdown(run(), undefined);
    const before = '# Benchmarks\n\nbench text\n\n<!-- load:start -->\nold section\n<!-- load:end -->\n';
    const after = withLoadSection(before, section);
    expect(after).toBe(`# Benchmarks\n\nbench text\n\n${section}`);
    expect(withLoadSection('# Benchmarks\n', section)).toBe(`# Benchmarks\n\n${section}`);
    expect(existingLoadSection(after)).toBe(`\n${section.trimEnd()}\n`);
    expect(existingLoadSection('# Benchmarks\n')).toBe('');
  });
});
