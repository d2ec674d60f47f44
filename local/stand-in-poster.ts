/**
 * A stand-in for PostToConnection, for the bench's lanes stage (`bench/stages/lanes.ts`): each
 * post waits a simulated round trip, answers `sent`, and records when it completed beside the
 * emit time the bench wrote into the event. With it, fan-out and its lane workers deliver to
 * thousands of subscribers without thousands of open sockets, so what the stage measures is the
 * delivering processes, not the local gateway's one process sending to sockets.
 *
 * Enabled by AEP_LOCAL_STANDIN_POST_MS (the round trip, ms) together with
 * AEP_LOCAL_STANDIN_POST_LOG (a folder): the stack injects it into the fan-out runtime
 * (`stack.ts`) and each lane worker into its own (`lane-worker-process.ts`); nothing else
 * posts through it. Each process writes its samples to a file of its own in the folder,
 * `<label>-<pid>.samples`, created when the poster is, appended every `flushEveryMs` and at
 * exit: one line per delivery, `<emit ms> <completed ms>` (wall clock, fractional ms). A
 * delivered text without the emit mark (`data.benchEmitMs`) is counted in no line.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionPoster } from '../src/relay/ports/connection-poster.ts';

export const STANDIN_VARIABLES = { postMs: 'AEP_LOCAL_STANDIN_POST_MS', logDir: 'AEP_LOCAL_STANDIN_POST_LOG' } as const;

/** Where the bench puts the emit time in an event: `data.benchEmitMs`, a number. */
export const EMIT_MARK = '"benchEmitMs":';

/** The emit time (ms) the bench wrote into a delivered text, or undefined when it has none. */
export function emitTimeOf(text: string): number | undefined {
  const at = text.indexOf(EMIT_MARK);
  if (at === -1) return undefined;
  const start = at + EMIT_MARK.length;
  let end = start;
  // Digits and a decimal point: the bench writes a plain non-negative number (no exponent).
  for (; end < text.length; end += 1) {
    const code = text.charCodeAt(end);
    if (!(code === 46 || (code >= 48 && code <= 57))) break;
  }
  if (end === start) return undefined;
  const value = Number(text.slice(start, end));
  return Number.isFinite(value) ? value : undefined;
}

/** One process's samples, held as lines until drained into its file. */
export class DeliverySamples {
  private pending: string[] = [];
  private recorded = 0;

  /** Records one delivery; one without an emit time is not a sample. */
  record(emitMs: number | undefined, doneMs: number): void {
    if (emitMs === undefined) return;
    this.pending.push(`${round(emitMs)} ${round(doneMs)}\n`);
    this.recorded += 1;
  }

  /** Samples recorded since the start. */
  get count(): number {
    return this.recorded;
  }

  /** The lines not yet drained, and forgets them. */
  drain(): string {
    const text = this.pending.join('');
    this.pending = [];
    return text;
  }
}

/** Parses a samples file's text (whole lines only) into emit and completion times. */
export function parseSamples(text: string): Array<{ emitMs: number; doneMs: number }> {
  const samples: Array<{ emitMs: number; doneMs: number }> = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [emit, done] = line.split(' ');
    const emitMs = Number(emit);
    const doneMs = Number(done);
    if (!Number.isFinite(emitMs) || !Number.isFinite(doneMs)) throw new Error(`not a delivery sample: ${JSON.stringify(line)}`);
    samples.push({ emitMs, doneMs });
  }
  return samples;
}

export interface StandInPosterOptions {
  /** The simulated round trip of each post (ms). */
  postMs: number;
  /** The file this process's samples go to (created, empty, now). */
  file: string;
  /** Wall clock with sub-millisecond resolution; the samples of all processes are compared. */
  now?: () => number;
  flushEveryMs?: number;
}

export type StandInPoster = ConnectionPoster & {
  /** Appends the samples recorded since the last flush to the file. */
  flush(): void;
  readonly samples: DeliverySamples;
};

export function standInPoster(options: StandInPosterOptions): StandInPoster {
  const now = options.now ?? (() => performance.timeOrigin + performance.now());
  const samples = new DeliverySamples();
  writeFileSync(options.file, '');
  const flush = (): void => {
    const text = samples.drain();
    if (text !== '') appendFileSync(options.file, text);
  };
  // Unref'd: the poster never keeps a process alive; whatever is left goes out at exit.
  setInterval(flush, options.flushEveryMs ?? 100).unref();
  process.once('exit', flush);
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  return {
    samples,
    flush,
    post: async (_connectionId, text) => {
      if (options.postMs > 0) await wait(options.postMs);
      samples.record(emitTimeOf(text), now());
      return 'sent';
    },
    // The stand-in holds no connections: closing one is done, and every one is open.
    close: async () => undefined,
    isOpen: async () => true,
  };
}

/**
 * The stand-in when AEP_LOCAL_STANDIN_POST_MS is set, its file named after `label` and this
 * process; undefined otherwise. Both variables or neither.
 */
export function standInPosterFromEnv(env: NodeJS.ProcessEnv, label: string): StandInPoster | undefined {
  const postMs = env[STANDIN_VARIABLES.postMs];
  const logDir = env[STANDIN_VARIABLES.logDir];
  if ((postMs === undefined || postMs === '') && (logDir === undefined || logDir === '')) return undefined;
  const ms = Number(postMs);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`${STANDIN_VARIABLES.postMs} must be a non-negative number of ms, got ${JSON.stringify(postMs)}`);
  if (logDir === undefined || logDir === '') throw new Error(`${STANDIN_VARIABLES.postMs} needs ${STANDIN_VARIABLES.logDir} (the folder for the delivery samples)`);
  return standInPoster({ postMs: ms, file: join(logDir, `${label}-${process.pid}.samples`) });
}

const round = (ms: number) => Math.round(ms * 100) / 100;
