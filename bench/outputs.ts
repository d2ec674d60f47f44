/**
 * Writing the bench's outputs: BENCHMARKS.md, bench/results.json and the SVG plots; and the SSE
 * stream-hour's own bench/sse-stream-hour.json and .md, which BENCHMARKS.md quotes (one home for
 * those figures, whichever run measured them last: the full bench or `--only sse-hour`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_NAMES } from '../local/usage.ts';
import { existingLoadSection } from './load-report.ts';
import { renderMarkdown, renderSvgs } from './report.ts';
import type { BenchResults } from './report.ts';
import { sseStreamHourMarkdown } from './sse-stream-hour-report.ts';
import type { SseStreamHour } from './sse-stream-hour-model.ts';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const resultsPath = join(repoRoot, 'bench', 'results.json');
const streamHourPath = join(repoRoot, 'bench', 'sse-stream-hour.json');

/** Every file the bench writes, relative to the repository root (the plots by pattern: `renderSvgs` names them). */
export const BENCH_OUTPUT_FILES: readonly string[] = ['BENCHMARKS.md', 'bench/results.json', 'bench/sse-stream-hour.json', 'bench/sse-stream-hour.md', 'bench/*.svg'];

/** The `npm run load` section of the current BENCHMARKS.md, kept as `npm run load` wrote it when the rest is rewritten. */
function loadSection(): string {
  const path = join(repoRoot, 'BENCHMARKS.md');
  return existingLoadSection(existsSync(path) ? readFileSync(path, 'utf8') : '');
}

/**
 * The committed results as they were saved: a run that re-measures one stage writes them back
 * with that stage replaced and nothing else changed.
 */
export function readSavedResults(): BenchResults {
  return JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchResults;
}

/**
 * A copy of `results` with every function of `FUNCTION_NAMES` in each usage record, for the
 * report, which reads them all: a function added since the results were taken (the bridges, the
 * sink retry, the fan-out lanes) shows as never invoked, which it was not: it did not exist in
 * that run. A copy, so what is written back is what was measured.
 */
export function withEveryFunction(results: BenchResults): BenchResults {
  const copy = structuredClone(results);
  const fill = (value: unknown): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) return value.forEach(fill);
    const record = value as Record<string, unknown>;
    const functions = record.functions as Record<string, unknown> | undefined;
    if (typeof functions === 'object' && functions !== null && 'http' in functions) {
      for (const name of FUNCTION_NAMES) functions[name] ??= { invocations: 0, completed: 0, errors: 0, durationMs: 0, billedMs: 0, maxDurationMs: 0, readUnits: 0, writeUnits: 0, dynamoCalls: 0 };
    }
    Object.values(record).forEach(fill);
  };
  fill(copy);
  return copy;
}

/** The committed SSE stream-hour (absent before the stage first ran). */
export function readSavedStreamHour(): SseStreamHour | undefined {
  return existsSync(streamHourPath) ? (JSON.parse(readFileSync(streamHourPath, 'utf8')) as SseStreamHour) : undefined;
}

/** Writes bench/sse-stream-hour.json and .md; answers the paths written. */
export function writeStreamHour(hour: SseStreamHour): string[] {
  const outputs: Array<[string, string]> = [
    [streamHourPath, `${JSON.stringify(hour, null, 2)}\n`],
    [join(repoRoot, 'bench', 'sse-stream-hour.md'), sseStreamHourMarkdown(hour)],
  ];
  for (const [path, content] of outputs) writeFileSync(path, content);
  return outputs.map(([path]) => relative(process.cwd(), path) || path);
}

const benchmarksMd = (results: BenchResults, streamHour: SseStreamHour | undefined): [string, string] => [join(repoRoot, 'BENCHMARKS.md'), renderMarkdown(withEveryFunction(results), streamHour) + loadSection()];

/** BENCHMARKS.md and the SVG plots from `results`; nothing of the results themselves. */
const renderedOutputs = (results: BenchResults, streamHour: SseStreamHour | undefined): Array<[string, string]> => [
  benchmarksMd(results, streamHour),
  ...Object.entries(renderSvgs(withEveryFunction(results))).map(([name, svg]): [string, string] => [join(repoRoot, 'bench', name), svg]),
];

/** Writes `outputs`; answers the paths written, relative to the working directory. */
function write(outputs: ReadonlyArray<[string, string]>): string[] {
  for (const [path, content] of outputs) writeFileSync(path, content);
  return outputs.map(([path]) => relative(process.cwd(), path) || path);
}

/**
 * Rewrites BENCHMARKS.md alone, from `results` and the SSE stream-hour (by default the committed
 * one): for a stage whose figures live outside bench/results.json (the SSE stream-hour).
 */
export function writeBenchmarksMd(results: BenchResults, streamHour: SseStreamHour | undefined = readSavedStreamHour()): string[] {
  return write([benchmarksMd(results, streamHour)]);
}

/**
 * Rewrites BENCHMARKS.md and the plots from `results` (`--report-only`), never bench/results.json:
 * re-rendering measures nothing, so it has nothing to write there.
 */
export function writeRendered(results: BenchResults, streamHour: SseStreamHour | undefined = readSavedStreamHour()): string[] {
  return write(renderedOutputs(results, streamHour));
}

/** Writes every output from `results` and the SSE stream-hour (by default the committed one), bench/results.json with them. */
export function writeOutputs(results: BenchResults, streamHour: SseStreamHour | undefined = readSavedStreamHour()): string[] {
  return write([...renderedOutputs(results, streamHour), [resultsPath, `${JSON.stringify(results, null, 2)}\n`]]);
}
