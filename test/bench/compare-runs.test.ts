/**
 * Comparing two bench renderings: every ratio figure paired by place within its section, the
 * distance taken against the smaller figure, sections of different shape reported, not paired.
 */
import { describe, expect, it } from 'vitest';
import { apart, compareRuns, ratioFigures } from '../../bench/compare-runs.ts';

const run = (p50: string, cpu: string, rows = 1) =>
  ['# Benchmarks', '', '## Latency', '', `| POST → WebSocket | **${p50}** | **1.50×** |`, '', '## Fan-out at scale', '', ...Array.from({ length: rows }, () => `| 1,000 | **${cpu}** | 4,409 per CPU-second | 12,345× |`)].join('\n');

describe('comparing two bench runs', () => {
  it('reads every ratio figure under its section, in order, with its value', () => {
    const figures = ratioFigures(run('0.90×', '2.57×'));
    expect(figures.map(({ section, index, value }) => [section, index, value])).toEqual([
      ['Latency', 0, 0.9],
      ['Latency', 1, 1.5],
      ['Fan-out at scale', 0, 2.57],
      ['Fan-out at scale', 1, 12345],
    ]);
  });

  it('takes the distance against the smaller figure', () => {
    expect(apart(1, 1.15)).toBeCloseTo(0.15);
    expect(apart(1.15, 1)).toBeCloseTo(0.15);
    expect(apart(0.82, 1)).toBeCloseTo(0.2195, 3);
    expect(apart(0, 0)).toBe(0);
    expect(apart(0, 1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('lists the pairs over the tolerance and nothing else', () => {
    const same = compareRuns(run('0.90×', '2.57×'), run('0.95×', '2.80×'));
    expect(same.compared).toBe(4);
    expect(same.over).toEqual([]);
    const apartRuns = compareRuns(run('0.57×', '2.57×'), run('0.69×', '2.57×'));
    expect(apartRuns.over).toHaveLength(1);
    expect(apartRuns.over[0]?.a.section).toBe('Latency');
    expect(apartRuns.over[0]?.apart).toBeCloseTo(0.12 / 0.57);
    // A looser tolerance lets the same pair through.
    expect(compareRuns(run('0.57×', '2.57×'), run('0.69×', '2.57×'), 0.25).over).toEqual([]);
  });

  it('reports a section whose figures cannot be paired by place instead of pairing them wrongly', () => {
    const comparison = compareRuns(run('0.90×', '2.57×', 1), run('0.90×', '2.57×', 2));
    expect(comparison.unpaired).toEqual([{ section: 'Fan-out at scale', a: 2, b: 4 }]);
    expect(comparison.compared).toBe(2);
  });
});
