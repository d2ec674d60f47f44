/**
 * Do two bench runs agree? `tsx bench/compare-runs.ts A.md B.md [tolerance]` reads two renderings
 * of BENCHMARKS.md and pairs every ratio figure (a number followed by `×`) of one with the figure
 * at the same place in the other, section by section, and lists those further apart than the
 * tolerance (default 15%). Apart is taken against the smaller of the two (1.00× and 1.15× are
 * 15% apart), the stricter reading. A section whose count of figures differs is reported whole:
 * its figures cannot be paired by place.
 *
 * Absolute figures (this machine's milliseconds, rates, CPU) are not compared: they move with the
 * host by design, and the ratio beside each is what must hold.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A ratio figure of a rendering: the section it stands in, its place there, its value and the line around it. */
export interface RatioFigure {
  section: string;
  index: number;
  value: number;
  context: string;
}

// "1.15×", "**0.90×**", "12,345×".
const RATIO = /(\d[\d,]*(?:\.\d+)?)×/g;

/** Every ratio figure of a BENCHMARKS.md rendering, in order, under its `##` or `###` heading. */
export function ratioFigures(markdown: string): RatioFigure[] {
  const figures: RatioFigure[] = [];
  let section = '(top)';
  const perSection = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading !== null) {
      section = heading[1] as string;
      continue;
    }
    for (const match of line.matchAll(RATIO)) {
      const index = perSection.get(section) ?? 0;
      perSection.set(section, index + 1);
      const at = match.index ?? 0;
      figures.push({ section, index, value: Number((match[1] as string).replaceAll(',', '')), context: line.slice(Math.max(0, at - 80), at + 20).trim() });
    }
  }
  return figures;
}

/** How far apart two positive figures are, as a share of the smaller (0 when equal). */
export const apart = (a: number, b: number): number => (Math.min(a, b) <= 0 ? (a === b ? 0 : Number.POSITIVE_INFINITY) : Math.abs(a - b) / Math.min(a, b));

export interface RunComparison {
  /** Figures paired by place. */
  compared: number;
  /** Pairs further apart than the tolerance. */
  over: Array<{ a: RatioFigure; b: RatioFigure; apart: number }>;
  /** Sections whose figure counts differ between the two renderings (not paired). */
  unpaired: Array<{ section: string; a: number; b: number }>;
}

export function compareRuns(a: string, b: string, tolerance = 0.15): RunComparison {
  const group = (figures: RatioFigure[]) => {
    const sections = new Map<string, RatioFigure[]>();
    for (const figure of figures) sections.set(figure.section, [...(sections.get(figure.section) ?? []), figure]);
    return sections;
  };
  const left = group(ratioFigures(a));
  const right = group(ratioFigures(b));
  const result: RunComparison = { compared: 0, over: [], unpaired: [] };
  for (const section of new Set([...left.keys(), ...right.keys()])) {
    const one = left.get(section) ?? [];
    const other = right.get(section) ?? [];
    if (one.length !== other.length) {
      result.unpaired.push({ section, a: one.length, b: other.length });
      continue;
    }
    one.forEach((figure, index) => {
      const twin = other[index] as RatioFigure;
      result.compared += 1;
      const distance = apart(figure.value, twin.value);
      if (distance > tolerance) result.over.push({ a: figure, b: twin, apart: distance });
    });
  }
  return result;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const [first, second, toleranceArg] = process.argv.slice(2);
  if (first === undefined || second === undefined) {
    process.stderr.write('usage: tsx bench/compare-runs.ts A.md B.md [tolerance, default 0.15]\n');
    process.exit(2);
  }
  const tolerance = toleranceArg === undefined ? 0.15 : Number(toleranceArg);
  const comparison = compareRuns(readFileSync(first, 'utf8'), readFileSync(second, 'utf8'), tolerance);
  for (const { section, a, b } of comparison.unpaired) process.stdout.write(`unpaired: "${section}" has ${a} figures in the first and ${b} in the second\n`);
  for (const { a, b, apart: distance } of comparison.over) process.stdout.write(`over: ${a.section} #${a.index}: ${a.value}× and ${b.value}×, ${(100 * distance).toFixed(1)}% apart — …${a.context}\n`);
  process.stdout.write(`${comparison.compared - comparison.over.length} of ${comparison.compared} ratios within ${(100 * tolerance).toFixed(0)}%${comparison.unpaired.length > 0 ? `; ${comparison.unpaired.length} sections unpaired` : ''}\n`);
  process.exit(comparison.over.length === 0 && comparison.unpaired.length === 0 ? 0 : 1);
}
