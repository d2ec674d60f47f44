/**
 * Handler CPU per event, in-process with the protocol functions fan-out and ingest use:
 * JSON parse + envelope validation, matching against 100 compiled filters, and the delivery
 * text (down-leveled where the subscriber's capture ceiling is below the event's level) for
 * every filter that matches, over the official golden corpus.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventMatcher } from '../src/protocol/attr-match.ts';
import type { AepEvent } from '../src/protocol/event.ts';
import { validateEnvelope } from '../src/protocol/envelope.ts';
import type { CaptureLevel } from '../src/protocol/levels.ts';
import { needsDownlevel } from '../src/protocol/downlevel.ts';
import { deliveryText } from '../src/relay/domain/delivery-text.ts';
import type { QuietWait } from './quiet-machine.ts';
import { alternate, mean, referencePipeline } from './cpu-reference.ts';
import { matcherOf } from './workload.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The golden corpus, found the way the tests find it (AEP_FIXTURES, else ../shared/aep/conformance/fixtures). */
export function goldenCorpusPath(): string {
  const dir = resolve(repoRoot, process.env.AEP_FIXTURES ?? '../shared/aep/conformance/fixtures');
  const file = join(dir, 'golden', 'golden.jsonl');
  if (!existsSync(file)) throw new Error(`golden corpus not found at ${file} (set AEP_FIXTURES to the conformance/fixtures folder)`);
  return file;
}

interface Subscriber {
  filter: Record<string, unknown>;
  ceiling: CaptureLevel | undefined;
  matches: EventMatcher;
}

/** 100 filters of the shapes subscribers use, with a mix of capture ceilings. */
export function benchFilters(sessions: readonly string[], agents: readonly string[]): Array<{ filter: Record<string, unknown>; ceiling: CaptureLevel | undefined }> {
  const filters: Array<Record<string, unknown>> = [];
  const otherSessions = Array.from({ length: 10 }, (_, index) => `s_nowhere_${index}`);
  // 25 session filters: one per corpus session, the rest on sessions that never appear.
  for (let index = 0; index < 25; index += 1) filters.push({ session: index < sessions.length ? (sessions[index] as string) : (otherSessions[index % otherSessions.length] as string) });
  // 25 type patterns: exact names, category wildcards, inclusion lists.
  const typePatterns: unknown[] = [
    'tool.*', 'run.*', 'session.*', 'attention.*', 'progress.*', 'control.*', 'agent.*', 'delegation.*', 'resource.*', 'assessment.*',
    'tool.requested', 'tool.completed', 'run.finished', 'attention.requested', 'error.raised', 'state.snapshot', 'x.claude-code.*',
    ['tool.*', 'run.*'], ['attention.*', 'control.*'], ['session.started', 'session.ended'], ['progress.task.*', 'progress.artifact.*'],
    ['error.*', 'run.failed', 'tool.failed'], ['state.*'], ['agent.presence', 'agent.idle', 'agent.health'], ['run.step.*'],
  ];
  for (const type of typePatterns) filters.push({ type });
  // 20 severity bands, alone and with a type.
  const bands = [{ gte: 'notice' }, { gte: 'warning' }, { gte: 'error' }, { lte: 'info' }, { gte: 'info', lte: 'warning' }];
  for (let index = 0; index < 20; index += 1) {
    const severity = bands[index % bands.length] as Record<string, string>;
    filters.push(index < 10 ? { severity } : { severity, type: typePatterns[index % 10] });
  }
  // 15 agent inclusions.
  for (let index = 0; index < 15; index += 1) {
    const members = [agents[index % agents.length], agents[(index + 2) % agents.length], `agent-nowhere-${index}`].filter((member): member is string => member !== undefined);
    filters.push(index % 3 === 0 ? { agent: members[0] as string } : { agent: [...new Set(members)] });
  }
  // 15 combinations, including match-all.
  for (let index = 0; index < 15; index += 1) {
    const session = sessions[index % Math.max(1, sessions.length)] ?? 's_8f2c';
    const agent = agents[index % Math.max(1, agents.length)] ?? 'claude-code';
    const shapes: Array<Record<string, unknown>> = [
      {},
      { session, type: 'tool.*' },
      { agent, severity: { gte: 'info' } },
      { session, severity: { gte: 'notice' }, type: ['attention.*', 'control.*'] },
      { agent: [agent], capture: ['metadata', 'redacted'] },
    ];
    filters.push(shapes[index % shapes.length] as Record<string, unknown>);
  }
  const ceilings: Array<CaptureLevel | undefined> = [undefined, 'full', 'redacted', 'metadata', 'none'];
  return filters.map((filter, index) => ({ filter, ceiling: ceilings[index % ceilings.length] }));
}

export interface CpuResult {
  corpus: string;
  corpusEvents: number;
  filters: number;
  ceilings: Record<string, number>;
  rounds: number;
  eventsProcessed: number;
  /** Microseconds per event, each stage measured on its own, and the whole pipeline. */
  usPerEvent: { parseAndValidate: number; match100: number; deliveryText: number; pipeline: number };
  matchesPerEvent: number;
  downlevelsPerEvent: number;
  /**
   * The yardstick: the fixed reference pipeline's µs per event (`cpu-reference.ts`), timed in
   * alternation with the whole pipeline, and the ratio pipeline ÷ reference (the figure that
   * holds across machines). Absent in results from before the yardstick.
   */
  reference?: {
    usPerEvent: number;
    pipelineRatio: number;
    /**
     * Each stage ÷ the reference, from alternating pairs of its own (the median pair), and in a
     * repeated result the median over the repeats. Absent in results from before: their stages
     * were timed one after another and divided by the reference of the pipeline's pairs.
     */
    stageRatios?: StageRatios;
  };
  /**
   * How the figures were taken: the pipeline µs of every repeat (this result is the median
   * repeat's), so the spread is on record, and the machine's 1-minute load average before each
   * repeat and after the last. Absent in results from before repeats were taken.
   */
  repeats?: { pipelineUsPerEvent: number[]; loadAverage: number[]; loadAfter?: number; taken?: CpuTaking; pipelineRatio?: number[] };
}

export interface StageRatios {
  parseAndValidate: number;
  match100: number;
  deliveryText: number;
}

/** Where the CPU stage ran and what the machine was doing. Absent in results from before it was recorded. */
export interface CpuTaking {
  /** `alone`: `npm run bench -- --only cpu`, nothing else of the bench running; `first stage`: the start of a full run, before the stack. */
  mode: 'alone' | 'first stage';
  date: string;
  commit: string;
  /** The wait for a quiet machine before the first repeat. */
  quietWait: QuietWait;
}

/**
 * Runs the benchmark `times` times, each in a fresh Node process, and returns the run with the
 * median pipeline figure, with every repeat's figure. A process settles into one of a few
 * compiled forms of the 100 matcher calls and keeps it (the match stage's ratio fell on about
 * 1.26, 1.34 or 1.44 from one process to the next and barely moved within one), so repeats in
 * one process sample one form, and two runs could disagree by 20% on nothing but that draw.
 * Each stage's ratio is therefore the mean over the processes: a median picks one form, a mean
 * averages over them.
 */
export function runCpuBenchmarkRepeated(times: number, minMsPerStage: number, loadAverage: () => number[], taken?: CpuTaking): CpuResult {
  const results: CpuResult[] = [];
  const loads: number[] = [];
  for (let index = 0; index < times; index += 1) {
    loads.push(loadAverage()[0] ?? Number.NaN);
    results.push(runCpuBenchmarkInFreshProcess(minMsPerStage));
  }
  return combineRepeats(results, { loads, loadAfter: loadAverage()[0] ?? Number.NaN, ...(taken === undefined ? {} : { taken }) });
}

/** One repeat in its own process (`cpu-process.ts`), so its compiled code owes nothing to the repeats before it. */
function runCpuBenchmarkInFreshProcess(minMsPerStage: number): CpuResult {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'cpu-process.ts');
  const output = execFileSync(process.execPath, ['--import', 'tsx', script, String(minMsPerStage)], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(output) as CpuResult;
}

/** The median repeat by pipeline ratio, each stage's ratio the mean over the repeats, and the repeats' own figures. */
export function combineRepeats(results: readonly CpuResult[], context: { loads: number[]; loadAfter: number; taken?: CpuTaking }): CpuResult {
  // The median by ratio: the figure the stage stands for is pipeline ÷ reference.
  const ratioOf = (result: CpuResult) => result.reference?.pipelineRatio ?? result.usPerEvent.pipeline;
  const sorted = [...results].sort((a, b) => ratioOf(a) - ratioOf(b));
  const median = sorted[Math.floor((sorted.length - 1) / 2)] as CpuResult;
  const stageRatiosOf = results.map((result) => result.reference?.stageRatios);
  const meanOf = (stage: keyof StageRatios) => mean(stageRatiosOf.map((ratios) => (ratios as StageRatios)[stage]));
  const stageRatios: StageRatios | undefined = stageRatiosOf.every((ratios) => ratios !== undefined)
    ? { parseAndValidate: meanOf('parseAndValidate'), match100: meanOf('match100'), deliveryText: meanOf('deliveryText') }
    : undefined;
  const repeats = { pipelineUsPerEvent: results.map((result) => result.usPerEvent.pipeline), pipelineRatio: results.map(ratioOf), loadAverage: context.loads, loadAfter: context.loadAfter };
  const reference = median.reference === undefined ? undefined : { ...median.reference, ...(stageRatios === undefined ? {} : { stageRatios }) };
  return { ...median, ...(reference === undefined ? {} : { reference }), repeats: context.taken === undefined ? repeats : { ...repeats, taken: context.taken } };
}

function timeRounds(minMs: number, minRounds: number, body: () => void): { rounds: number; ms: number } {
  const started = performance.now();
  let rounds = 0;
  while (rounds < minRounds || performance.now() - started < minMs) {
    body();
    rounds += 1;
  }
  return { rounds, ms: performance.now() - started };
}

export function runCpuBenchmark(minMsPerStage = 1500): CpuResult {
  const corpus = goldenCorpusPath();
  const texts = readFileSync(corpus, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const events = texts.map((text) => {
    const validation = validateEnvelope(JSON.parse(text));
    if (!validation.ok) throw new Error(`golden event invalid: ${JSON.stringify(validation.violations[0])}`);
    return validation.event;
  });
  const sessions = [...new Set(events.flatMap((event) => (event.session === undefined ? [] : [event.session])))];
  const agents = [...new Set(events.map((event) => event.agent))];
  const subscribers: Subscriber[] = benchFilters(sessions, agents).map(({ filter, ceiling }) => ({ filter, ceiling, matches: matcherOf(filter) }));

  // Which (event, subscriber) pairs match, for the delivery-text stage and the counts.
  const matched: Array<Array<Subscriber>> = events.map((event) => subscribers.filter((subscriber) => subscriber.matches(event)));
  const matches = matched.reduce((sum, list) => sum + list.length, 0);
  const downlevels = matched.reduce((sum, list, index) => sum + list.filter((subscriber) => subscriber.ceiling !== undefined && needsDownlevel(events[index] as AepEvent, subscriber.ceiling)).length, 0);

  let sink = 0;
  const parseAndValidate = () => {
    for (const text of texts) {
      const validation = validateEnvelope(JSON.parse(text));
      if (validation.ok) sink += 1;
    }
  };
  const matchAll = () => {
    for (const event of events) for (const subscriber of subscribers) if (subscriber.matches(event)) sink += 1;
  };
  const deliver = () => {
    for (const [index, list] of matched.entries()) {
      const event = events[index] as AepEvent;
      const text = texts[index] as string;
      for (const subscriber of list) sink += deliveryText(text, event, subscriber.ceiling).length;
    }
  };
  const pipeline = () => {
    for (const text of texts) {
      const validation = validateEnvelope(JSON.parse(text));
      if (!validation.ok) continue;
      for (const subscriber of subscribers) if (subscriber.matches(validation.event)) sink += deliveryText(text, validation.event, subscriber.ceiling).length;
    }
  };
  // Warm-up so the JIT has compiled every path, each stage's own loop included, before timing:
  // a stage timed cold is still being tiered up during its first slices.
  for (const body of [pipeline, parseAndValidate, matchAll, deliver]) timeRounds(300, 50, body);
  // Each stage, and then the whole pipeline, in alternation with the reference, slice by slice,
  // on the same machine state: timed one after another, a stage's ratio moved by 15% from one
  // run to the next with what else the cores were doing during its 1.5 s.
  const reference = () => (sink += referencePipeline(texts));
  timeRounds(300, 50, reference);
  const stageSlices = 15;
  const stageA = alternate(parseAndValidate, reference, minMsPerStage / stageSlices, stageSlices);
  const stageB = alternate(matchAll, reference, minMsPerStage / stageSlices, stageSlices);
  const stageC = alternate(deliver, reference, minMsPerStage / stageSlices, stageSlices);
  const perEvent = (msPerRound: number) => (msPerRound * 1000) / texts.length;
  const slices = 30;
  const timed = alternate(pipeline, reference, minMsPerStage / slices, slices);
  const wholeRounds = Math.round(minMsPerStage / timed.subjectMsPerRound);
  if (sink === 0) throw new Error('nothing was computed');
  const pipelineUs = (timed.subjectMsPerRound * 1000) / texts.length;
  const referenceUs = (timed.referenceMsPerRound * 1000) / texts.length;
  const ceilings: Record<string, number> = {};
  for (const subscriber of subscribers) ceilings[subscriber.ceiling ?? 'as stored'] = (ceilings[subscriber.ceiling ?? 'as stored'] ?? 0) + 1;
  return {
    corpus: 'conformance/fixtures/golden/golden.jsonl',
    corpusEvents: texts.length,
    filters: subscribers.length,
    ceilings,
    rounds: wholeRounds,
    eventsProcessed: wholeRounds * texts.length,
    usPerEvent: { parseAndValidate: perEvent(stageA.subjectMsPerRound), match100: perEvent(stageB.subjectMsPerRound), deliveryText: perEvent(stageC.subjectMsPerRound), pipeline: pipelineUs },
    reference: { usPerEvent: referenceUs, pipelineRatio: timed.medianPairRatio, stageRatios: { parseAndValidate: stageA.medianPairRatio, match100: stageB.medianPairRatio, deliveryText: stageC.medianPairRatio } },
    matchesPerEvent: matches / texts.length,
    downlevelsPerEvent: downlevels / texts.length,
  };
}
