/** Handler CPU per event over the golden corpus (parse + validate, 100 compiled filters, delivery text), each a ratio to the reference pipeline timed in the same run. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventMatcher } from '../../src/protocol/attr-match.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import { validateEnvelope } from '../../src/protocol/envelope.ts';
import type { CaptureLevel } from '../../src/protocol/levels.ts';
import { needsDownlevel } from '../../src/protocol/downlevel.ts';
import { deliveryText } from '../../src/relay/domain/delivery-text.ts';
import { matcherOf } from '../workload.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The golden corpus (AEP_FIXTURES, else ../shared/aep/conformance/fixtures), as the tests find it. */
function goldenCorpusPath(): string {
  const file = join(resolve(repoRoot, process.env.AEP_FIXTURES ?? '../shared/aep/conformance/fixtures'), 'golden', 'golden.jsonl');
  if (!existsSync(file)) throw new Error(`golden corpus not found at ${file} (set AEP_FIXTURES to the conformance/fixtures folder)`);
  return file;
}

/** The CPU yardstick: parse, walk (every key and string) and serialize each event; do not change it, or earlier ratios become incomparable. */
export function referencePipeline(texts: readonly string[]): number {
  let sink = 0;
  for (const text of texts) {
    const value = JSON.parse(text) as unknown;
    sink += walk(value) + JSON.stringify(value).length;
  }
  return sink;
}

function walk(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return 1;
  if (Array.isArray(value)) return value.reduce((total: number, item: unknown) => total + walk(item), 0);
  let total = 0;
  for (const [key, item] of Object.entries(value)) total += key.length + walk(item);
  return total;
}

/** The reference over `texts`, repeated until it has used at least `leastMs` of this thread's CPU (it is synchronous). */
export function referenceSlice(texts: readonly string[], leastMs: number): { events: number; cpuMs: number; sink: number } {
  const started = process.threadCpuUsage();
  let [events, cpuMs, sink] = [0, 0, 0];
  while (events < texts.length || cpuMs < leastMs) {
    sink += referencePipeline(texts);
    events += texts.length;
    const used = process.threadCpuUsage(started);
    cpuMs = (used.user + used.system) / 1000;
  }
  return { events, cpuMs, sink };
}

/** Wall ms per call of `body`, called for at least `minMs` (and 10 times). */
export function msPerRound(body: () => void, minMs: number): number {
  const started = performance.now();
  let rounds = 0;
  for (; rounds < 10 || performance.now() - started < minMs; rounds += 1) body();
  return (performance.now() - started) / rounds;
}

type Subscriber = { filter: Record<string, unknown>; ceiling: CaptureLevel | undefined; matches: EventMatcher };

/** 100 filters of the shapes subscribers use, with a mix of capture ceilings. */
function benchFilters(sessions: readonly string[], agents: readonly string[]): Array<{ filter: Record<string, unknown>; ceiling: CaptureLevel | undefined }> {
  const filters: Array<Record<string, unknown>> = [];
  const otherSessions = Array.from({ length: 10 }, (_, index) => `s_nowhere_${index}`);
  for (let index = 0; index < 25; index += 1) filters.push({ session: index < sessions.length ? (sessions[index] as string) : (otherSessions[index % otherSessions.length] as string) });
  const typePatterns: unknown[] = [
    'tool.*', 'run.*', 'session.*', 'attention.*', 'progress.*', 'control.*', 'agent.*', 'delegation.*', 'resource.*', 'assessment.*',
    'tool.requested', 'tool.completed', 'run.finished', 'attention.requested', 'error.raised', 'state.snapshot', 'x.claude-code.*',
    ['tool.*', 'run.*'], ['attention.*', 'control.*'], ['session.started', 'session.ended'], ['progress.task.*', 'progress.artifact.*'],
    ['error.*', 'run.failed', 'tool.failed'], ['state.*'], ['agent.presence', 'agent.idle', 'agent.health'], ['run.step.*'],
  ];
  for (const type of typePatterns) filters.push({ type });
  const bands = [{ gte: 'notice' }, { gte: 'warning' }, { gte: 'error' }, { lte: 'info' }, { gte: 'info', lte: 'warning' }];
  for (let index = 0; index < 20; index += 1) {
    const severity = bands[index % bands.length] as Record<string, string>;
    filters.push(index < 10 ? { severity } : { severity, type: typePatterns[index % 10] });
  }
  for (let index = 0; index < 15; index += 1) {
    const members = [agents[index % agents.length], agents[(index + 2) % agents.length], `agent-nowhere-${index}`].filter((member): member is string => member !== undefined);
    filters.push(index % 3 === 0 ? { agent: members[0] as string } : { agent: [...new Set(members)] });
  }
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
  corpusEvents: number;
  filters: number;
  matchesPerEvent: number;
  downlevelsPerEvent: number;
  usPerEvent: { parseAndValidate: number; match100: number; deliveryText: number; pipeline: number; reference: number };
  ratio: { parseAndValidate: number; match100: number; deliveryText: number; pipeline: number };
}

export function runCpuBenchmark(minMsPerStage = 1500): CpuResult {
  const corpus = goldenCorpusPath();
  const texts = readFileSync(corpus, 'utf8').split('\n').filter((line) => line.trim() !== '');
  const events = texts.map((text) => {
    const validation = validateEnvelope(JSON.parse(text));
    if (!validation.ok) throw new Error(`golden event invalid: ${JSON.stringify(validation.violations[0])}`);
    return validation.event;
  });
  const sessions = [...new Set(events.flatMap((event) => (event.session === undefined ? [] : [event.session])))];
  const agents = [...new Set(events.map((event) => event.agent))];
  const subscribers: Subscriber[] = benchFilters(sessions, agents).map(({ filter, ceiling }) => ({ filter, ceiling, matches: matcherOf(filter) }));

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
  const reference = () => (sink += referencePipeline(texts));
  for (const body of [pipeline, parseAndValidate, matchAll, deliver, reference]) msPerRound(body, 300);
  const ms = { parseAndValidate: msPerRound(parseAndValidate, minMsPerStage), match100: msPerRound(matchAll, minMsPerStage), deliveryText: msPerRound(deliver, minMsPerStage), pipeline: msPerRound(pipeline, minMsPerStage), reference: msPerRound(reference, minMsPerStage) };
  if (sink === 0) throw new Error('nothing was computed');
  const perEvent = (msPerCall: number) => (msPerCall * 1000) / texts.length;
  const ratio = (key: keyof CpuResult['ratio']) => ms[key] / ms.reference;
  return {
    corpusEvents: texts.length,
    filters: subscribers.length,
    matchesPerEvent: matches / texts.length,
    downlevelsPerEvent: downlevels / texts.length,
    usPerEvent: { parseAndValidate: perEvent(ms.parseAndValidate), match100: perEvent(ms.match100), deliveryText: perEvent(ms.deliveryText), pipeline: perEvent(ms.pipeline), reference: perEvent(ms.reference) },
    ratio: { parseAndValidate: ratio('parseAndValidate'), match100: ratio('match100'), deliveryText: ratio('deliveryText'), pipeline: ratio('pipeline') },
  };
}
