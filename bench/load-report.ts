/**
 * The `npm run load` section of BENCHMARKS.md, from bench/load-results.json. Machines of this
 * kind differ 2-3× in speed, so each timed figure is stated against a yardstick of the same run,
 * this machine's absolute value beside: sustained ingest ÷ the offered rate, deliveries/s ÷ the
 * rate that ingest implies, and latency ÷ the local stream poll the stack ran with (locally the
 * latency is mostly that poll, as in the bench's latency section). Pure: `npm run load` writes
 * the section with it, and the bench's own renderer keeps the section as it finds it.
 */
import { pollYardstick } from './latency-report.ts';
import { fixed } from './report-format.ts';

export const LOAD_SECTION_START = '<!-- load:start -->';
export const LOAD_SECTION_END = '<!-- load:end -->';

/** The local stack's knobs the load run sets in the stack's environment. */
export type LoadStackSettings = {
  AEP_LOCAL_POLL_MS: number;
  AEP_LOCAL_WS_JITTER_MS: number;
  AEP_SOCKET_FRAMES_PER_SECOND: number;
};

/** One load run as bench/load-results.json holds it. Fields marked optional are absent from older runs. */
export interface LoadRun {
  date: string;
  commit: string;
  machine: { cpus: number; model: string; memoryBytes: number; node: string };
  consumers: number;
  emitters: number;
  targetEventsPerSecond: number;
  seconds: number;
  /** Recorded since the ratios: without it the latency has no yardstick. */
  settings?: LoadStackSettings;
  emitted: number;
  /** Events answered 202; absent from runs that emitted over WebSocket, which acknowledges nothing. */
  acknowledged?: number;
  refused?: number;
  /** Acknowledged events per second (before HTTP ingest: events sent per second). */
  sustainedEventsPerSecond: number;
  expectedDeliveries: number;
  delivered: number;
  duplicates?: number;
  deliveriesPerSecond: number;
  /** Null where a run had no delivery (JSON has no NaN). */
  latencyMs: { p50: number | null; p95: number | null; p99: number | null; max: number | null };
  errors: number;
  unexpectedCloses: number;
  missingDeliveries: number;
  peakStackRssMiB: number;
}

export interface LoadResults extends LoadRun {
  /** The run before, shown beside this one. */
  previous?: LoadRun;
}

/** A run's timed figures ÷ their same-run yardsticks; undefined where the run lacks the yardstick. */
export interface LoadRatios {
  /** The stream poll period the stack ran with (ms). */
  pollMs: number | undefined;
  /** The delivery rate the acknowledged ingest implies: acknowledged/s × consumers per session. */
  impliedDeliveriesPerSecond: number | undefined;
  /** Acknowledged/s ÷ the offered rate (`LOAD_RATE`): under 1, the stack fell behind it. */
  ingestOfTarget: number | undefined;
  /** Deliveries/s ÷ the implied delivery rate: under 1, fan-out fell behind the ingest. */
  deliveriesOfImplied: number | undefined;
  /** Latency percentiles in stream poll periods (the maximum is one sample: no ratio). */
  latencyInPolls: { p50: number | undefined; p95: number | undefined; p99: number | undefined };
}

/** Each consumer follows one emitter's session, round robin, so a session has consumers ÷ emitters of them on average. */
export const consumersPerSession = (run: LoadRun): number => run.consumers / run.emitters;

const ratio = (value: number | null | undefined, yardstick: number | undefined): number | undefined =>
  value === null || value === undefined || yardstick === undefined || !Number.isFinite(value) || !(yardstick > 0) ? undefined : value / yardstick;

export function loadRatios(run: LoadRun): LoadRatios {
  const pollMs = run.settings === undefined ? undefined : pollYardstick(run.settings, 'websocket')?.periodMs;
  // Before HTTP ingest nothing was acknowledged, and the rate on record is of events sent:
  // not the figure these ratios are about.
  const acknowledgedPerSecond = run.acknowledged === undefined ? undefined : run.sustainedEventsPerSecond;
  const impliedDeliveriesPerSecond = acknowledgedPerSecond === undefined ? undefined : acknowledgedPerSecond * consumersPerSession(run);
  return {
    pollMs,
    impliedDeliveriesPerSecond,
    ingestOfTarget: ratio(acknowledgedPerSecond, run.targetEventsPerSecond),
    deliveriesOfImplied: acknowledgedPerSecond === undefined ? undefined : ratio(run.deliveriesPerSecond, impliedDeliveriesPerSecond),
    latencyInPolls: { p50: ratio(run.latencyMs.p50, pollMs), p95: ratio(run.latencyMs.p95, pollMs), p99: ratio(run.latencyMs.p99, pollMs) },
  };
}

const times = (ratioValue: number | undefined) => (ratioValue === undefined ? '–' : `${fixed(ratioValue)}×`);
const orDash = (figure: number | null | undefined) => (figure === null || figure === undefined || !Number.isFinite(figure) ? '–' : String(figure));

/** The section, markers included; `previous` (the run before) gets a column of its own. */
export function loadSectionMarkdown(results: LoadRun, previous: LoadRun | undefined): string {
  const was = (cell: (run: LoadRun) => string) => (previous === undefined ? '' : ` | ${cell(previous)}`);
  const row = (label: string, cell: (run: LoadRun) => string) => `| ${label} | ${cell(results)}${was(cell)} |`;
  const poll = pollYardstick(results.settings ?? {}, 'websocket');
  return [
    LOAD_SECTION_START,
    '## Load (`npm run load`)',
    '',
    `Measured ${results.date} on commit \`${results.commit}\`, ${results.machine.cpus} × ${results.machine.model}, Node ${results.machine.node}, loopback only, local stack (DynamoDB Local).`,
    '',
    `${results.consumers} WebSocket consumers (each filtered to one emitter's session) and ${results.emitters} emitters POSTing one event per request, ${results.seconds} s at a target of ${results.targetEventsPerSecond} events/s. Sustained ingest counts the events the relay acknowledged (202) per second, from the first send to the last acknowledgement; deliveries per second run over the whole delivery window (first send to last delivery); a delivery is missing when a consumer never received an acknowledged event of its session (counted per consumer and event, so a duplicate cannot hide a miss).`,
    '',
    `Machines of this kind differ 2-3× in speed, so each timed figure is stated **÷ a yardstick of the same run**, this machine's absolute value beside (the rows marked "this machine"). Sustained ingest ÷ the target rate (\`LOAD_RATE\`), and deliveries/s ÷ the rate that ingest implies (acknowledged/s × consumers per session, consumers ÷ emitters): under 1×, the stack fell behind the offered load, acknowledging fewer events than were offered (the emitters run on the same machine) or delivering fewer than it acknowledged. The deliveries ratio sits a little under 1× even when nothing is lost: its window runs past the last acknowledgement by the last events' latency. Latency ÷ the period of ${poll?.name ?? 'the local stream poll (not recorded for this run)'}, which the load run sets to \`npm start\`'s default: locally nothing reaches a consumer before the stream poller has read the events table's stream, so latency is mostly that poll (as in the latency section). The maximum is one sample, so milliseconds only. A run that did not record a yardstick shows – for that ratio.`,
    '',
    previous === undefined ? '| figure | value |' : `| figure | this run | previous run (commit \`${String(previous.commit).slice(0, 7)}\`, ${previous.date}) |`,
    previous === undefined ? '|---|---|' : '|---|---|---|',
    row('events sent / acknowledged (202) / refused', (run) => `${run.emitted} / ${orDash(run.acknowledged)} / ${orDash(run.refused)}`),
    row('yardstick: target rate (`LOAD_RATE`)', (run) => `${run.targetEventsPerSecond} events/s`),
    row('**sustained ingest ÷ target rate**', (run) => `**${times(loadRatios(run).ingestOfTarget)}**`),
    row('this machine: sustained ingest (acknowledged)', (run) => `${run.sustainedEventsPerSecond} events/s`),
    row('deliveries (expected / received / duplicates)', (run) => `${run.expectedDeliveries} / ${run.delivered} / ${orDash(run.duplicates)}`),
    row('yardstick: deliveries the ingest implies (acknowledged/s × consumers per session)', (run) => {
      const implied = loadRatios(run).impliedDeliveriesPerSecond;
      return implied === undefined ? '–' : `${fixed(implied, 1)}/s (${run.sustainedEventsPerSecond} × ${Number(consumersPerSession(run).toFixed(2))})`;
    }),
    row('**deliveries/s ÷ the rate the ingest implies**', (run) => `**${times(loadRatios(run).deliveriesOfImplied)}**`),
    row('this machine: deliveries/s', (run) => `${run.deliveriesPerSecond}/s`),
    row('yardstick: stream poll period (`AEP_LOCAL_POLL_MS`)', (run) => (loadRatios(run).pollMs === undefined ? '–' : `${loadRatios(run).pollMs} ms`)),
    row('**delivery latency p50 / p95 / p99 ÷ stream poll**', (run) => {
      const { p50, p95, p99 } = loadRatios(run).latencyInPolls;
      return `**${times(p50)} / ${times(p95)} / ${times(p99)}**`;
    }),
    row('this machine: delivery latency p50 / p95 / p99 / max', (run) => `${orDash(run.latencyMs.p50)} / ${orDash(run.latencyMs.p95)} / ${orDash(run.latencyMs.p99)} / ${orDash(run.latencyMs.max)} ms`),
    row('error frames', (run) => String(run.errors)),
    row('unexpected closes', (run) => String(run.unexpectedCloses)),
    row('missing deliveries', (run) => String(run.missingDeliveries)),
    row('peak memory of the local stack (Node + DynamoDB Local JVM)', (run) => `${run.peakStackRssMiB} MiB`),
    '',
    'Latency is measured from the event\'s `time` (set by the emitter just before sending) to its arrival at a consumer, through the HTTP handler, DynamoDB Local, the stream poller and fan-out.',
    LOAD_SECTION_END,
    '',
  ].join('\n');
}

/** `text` (BENCHMARKS.md) with its load section replaced by `section`, or `section` appended when it has none. */
export function withLoadSection(text: string, section: string): string {
  const start = text.indexOf(LOAD_SECTION_START);
  const end = text.indexOf(LOAD_SECTION_END);
  if (start === -1 || end === -1) return `${text.trimEnd()}\n\n${section}`;
  const after = end + LOAD_SECTION_END.length;
  // The section ends with its own newline; the one after the old marker goes with it.
  return text.slice(0, start) + section + text.slice(text[after] === '\n' ? after + 1 : after);
}

/**
 * The load section of `text`, markers included, framed by blank lines for appending; '' when
 * there is none. The bench's renderer keeps it so: it re-renders from bench/results.json, which
 * holds no load run, and a `--report-only` must not lose the last `npm run load`.
 */
export function existingLoadSection(text: string): string {
  const start = text.indexOf(LOAD_SECTION_START);
  const end = text.indexOf(LOAD_SECTION_END);
  return start === -1 || end === -1 ? '' : `\n${text.slice(start, end + LOAD_SECTION_END.length)}\n`;
}
