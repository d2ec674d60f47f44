/**
 * Writing the bench's outputs: BENCHMARKS.md, bench/results.json and the SVG plots; and the SSE
 * stream-hour's own bench/sse-stream-hour.json and .md, which BENCHMARKS.md quotes (one home for
 * those figures, whichever run measured them last: the full bench or `--only sse-hour`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_NAMES } from '../local/usage.ts';
import { renderMarkdown, renderSvgs } from './report.ts';
import type { BenchResults } from './report.ts';
import { sseStreamHourMarkdown } from './sse-stream-hour-report.ts';
import type { SseStreamHour } from './sse-stream-hour-model.ts';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const resultsPath = join(repoRoot, 'bench', 'results.json');
const streamHourPath = join(repoRoot, 'bench', 'sse-stream-hour.json');

/** The `npm run load` section of the current BENCHMARKS.md, kept when the rest is rewritten. */
function loadSection(): string {
  const path = join(repoRoot, 'BENCHMARKS.md');
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const start = text.indexOf('<!-- load:start -->');
  const end = text.indexOf('<!-- load:end -->');
  return start === -1 || end === -1 ? '' : `\n${text.slice(start, end + '<!-- load:end -->'.length)}\n`;
}

/**
 * The committed results, for a run that re-measures one stage and keeps the rest. A function
 * added since they were taken (the bridges) is filled in as never invoked, which it was not:
 * it did not exist in that run.
 */
export function readSavedResults(): BenchResults {
  const saved = JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchResults;
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
  fill(saved);
  return saved;
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

const benchmarksMd = (results: BenchResults, streamHour: SseStreamHour | undefined): [string, string] => [join(repoRoot, 'BENCHMARKS.md'), renderMarkdown(results, streamHour) + loadSection()];

/**
 * Rewrites BENCHMARKS.md alone, from `results` and the SSE stream-hour (by default the committed
 * one): for a stage whose figures live outside bench/results.json (the SSE stream-hour).
 */
export function writeBenchmarksMd(results: BenchResults, streamHour: SseStreamHour | undefined = readSavedStreamHour()): string[] {
  const [path, content] = benchmarksMd(results, streamHour);
  writeFileSync(path, content);
  return [relative(process.cwd(), path) || path];
}

/**
 * Writes every output from `results` and the SSE stream-hour (by default the committed one);
 * answers the paths written, relative to the working directory.
 */
export function writeOutputs(results: BenchResults, streamHour: SseStreamHour | undefined = readSavedStreamHour()): string[] {
  const outputs: Array<[string, string]> = [
    benchmarksMd(results, streamHour),
    [resultsPath, `${JSON.stringify(results, null, 2)}\n`],
    ...Object.entries(renderSvgs(results)).map(([name, svg]): [string, string] => [join(repoRoot, 'bench', name), svg]),
  ];
  for (const [path, content] of outputs) writeFileSync(path, content);
  return outputs.map(([path]) => relative(process.cwd(), path) || path);
}
