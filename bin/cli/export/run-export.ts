/**
 * `aep-relay export`: a session's history as an AEP JSONL file (AEP-0003 §3.1: one event per
 * line, each line written with a single write), page after page through `GET /history`; or,
 * with `--sessions` / `--since` / `--until` and no `--session`, every chosen session of the
 * tenant (`window-export.ts`). Returns the exit code: 0 done, 1 refused or failed (with the
 * relay's error), 2 usage, 3 stopped at `--max-events`.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Environment } from '../../../src/config/env-readers.ts';
import { EXIT, exitOnFailure } from '../exit-codes.ts';
import { EXPORT_USAGE, parseExportArguments } from './export-arguments.ts';
import type { ExportRequest } from './export-arguments.ts';
import { historySource } from './history-source.ts';
import type { HistorySource } from './history-source.ts';
import { dedupeKey, resumePointOf } from './resume-point.ts';
import type { ResumePoint } from './resume-point.ts';
import { isCommandLine, runWindowExport } from './window-export.ts';

export interface ExportIo {
  /** Writes one complete line (standard output when no --out is given). */
  out(line: string): void;
  err(line: string): void;
  /** Rewrites the progress line; only called when standard error is a terminal. */
  progress?(text: string): void;
}

export async function runExport(argv: readonly string[], env: Environment, io: ExportIo): Promise<number> {
  let source: HistorySource | undefined;
  let fd: number | undefined;
  try {
    const request = parseExportArguments(argv, env);
    if (request === 'help') {
      io.out(EXPORT_USAGE);
      return 0;
    }
    if (request.session === undefined) {
      source = historySource(request, env);
      return await runWindowExport(request, source, io);
    }
    const resume: ResumePoint = request.out === undefined ? { written: new Set(), lines: 0 } : resumePointOf(request.out);
    if (request.out !== undefined) fd = openSync(request.out, 'a');
    const output = fd;
    const write = output === undefined ? io.out : (line: string) => void writeSync(output, `${line}\n`);
    source = historySource(request, env);
    const exported = await copyPages(source, { ...request, session: request.session }, resume, write, io.progress);
    io.progress?.(`exported ${exported} events${resume.lines > 0 ? ` (resumed after ${resume.lines} already in ${request.out})` : ''}\n`);
    return 0;
  } catch (error) {
    io.progress?.('\n');
    // A refusal exits 1 here whatever its code: an export that was refused is not "nothing to do".
    const code = exitOnFailure(error, io.err, { helpCommand: 'aep-relay export', refusedWhat: 'the export' });
    return code === EXIT.usage ? EXIT.usage : EXIT.failed;
  } finally {
    if (fd !== undefined) closeSync(fd);
    source?.close();
  }
}

async function copyPages(source: HistorySource, request: ExportRequest & { session: string }, resume: ResumePoint, write: (line: string) => void, progress: ExportIo['progress']): Promise<number> {
  const limit = String(request.pageSize);
  let params: Record<string, string> = {
    session: request.session,
    limit,
    ...(resume.after === undefined ? {} : { after: resume.after }),
    ...(request.since === undefined ? {} : { since: request.since }),
    ...(request.until === undefined ? {} : { until: request.until }),
    ...(request.capture === undefined ? {} : { capture: request.capture }),
  };
  let exported = 0;
  for (;;) {
    const page = await source.page(params);
    for (const line of page.lines) {
      if (request.commands === 'omit' && isCommandLine(line)) continue;
      if (resume.written.size > 0 && resume.written.has(dedupeKey(line))) continue;
      write(line);
      exported += 1;
    }
    progress?.(`exporting ${request.session}: ${resume.lines + exported} events`);
    if (page.next === undefined) return exported;
    params = { cursor: page.next, limit };
  }
}
