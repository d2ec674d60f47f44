/**
 * A tenant-wide export (`--sessions` and/or `--since` / `--until`): every chosen session in
 * name order (`session-plan.ts`), each read page after page through `GET /history` with the
 * window, its lines appended to the output file, and a checkpoint after every page
 * (`export-checkpoint.ts`), so a rerun continues exactly where the last one stopped.
 *
 * The file is what `POST /events` takes back: per session in `(epoch, seq)` order with seq-less
 * events in their place (the relay orders and deduplicates per emitter's session, so sessions
 * may follow one another in any order), and, by default, without commands, which `POST /events`
 * refuses (AEP-0004 §4.1: control is accepted only on the WebSocket binding); re-sending them
 * would also act on live agents again. Agent-scoped events are never stored, so never exported.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { isCommandType } from '../../../src/protocol/type-grammar.ts';
import { UsageError } from '../cli-arguments.ts';
import type { ExportRequest } from './export-arguments.ts';
import { readCheckpoint, sameSelection, sameSource, writeCheckpoint } from './export-checkpoint.ts';
import type { ExportCheckpoint, ExportSelection } from './export-checkpoint.ts';
import type { HistorySource } from './history-source.ts';
import { planSessions } from './session-plan.ts';

/** Exit code of an export stopped by `--max-events` (resumable). */
export const EXIT_STOPPED = 3;

export interface WindowExportIo {
  out(line: string): void;
  err(line: string): void;
  progress?(text: string): void;
}

export async function runWindowExport(request: ExportRequest, source: HistorySource, io: WindowExportIo): Promise<number> {
  const checkpointPath = resolve(request.resume ?? `${request.out as string}.checkpoint`);
  const from: ExportCheckpoint['from'] = request.url === undefined ? { tenant: request.tenant as string } : { url: request.url.replace(/\/+$/, '') };
  const checkpoint = readCheckpoint(checkpointPath) ?? (await beginExport(request, source, from, checkpointPath));
  checkResumable(request, checkpoint, from, checkpointPath);
  const fd = openOutput(checkpoint);
  try {
    const stopped = await copySessions(source, request, checkpoint, checkpointPath, fd, io.progress);
    io.progress?.('\n');
    const summary = `${checkpoint.events} events of ${checkpoint.sessions.length} sessions in ${checkpoint.out}${checkpoint.omittedCommands > 0 ? ` (${checkpoint.omittedCommands} commands left out)` : ''}`;
    if (stopped) {
      io.err(`stopped at --max-events: ${summary}; rerun with --resume ${checkpointPath} to continue`);
      return EXIT_STOPPED;
    }
    io.out(`exported ${summary}`);
    return 0;
  } finally {
    closeSync(fd);
  }
}

async function beginExport(request: ExportRequest, source: HistorySource, from: ExportCheckpoint['from'], checkpointPath: string): Promise<ExportCheckpoint> {
  if (request.out === undefined) throw new UsageError(`no checkpoint at ${checkpointPath} to resume; a new export needs --out <file>`);
  const out = resolve(request.out);
  // Without a checkpoint nothing says where such a file stands: resuming it could duplicate or skip.
  if (existsSync(out) && statSync(out).size > 0) throw new UsageError(`${out} already holds lines and has no checkpoint (${checkpointPath}): choose another --out, or remove it`);
  const selection = selectionOf(request);
  const sessions = await planSessions(source, selection);
  const checkpoint: ExportCheckpoint = { v: 1, from, out, selection, sessions, index: 0, bytes: 0, events: 0, omittedCommands: 0 };
  writeCheckpoint(checkpointPath, checkpoint);
  return checkpoint;
}

function selectionOf(request: ExportRequest): ExportSelection {
  return {
    ...(request.patterns === undefined ? {} : { patterns: request.patterns }),
    ...(request.since === undefined ? {} : { since: request.since }),
    ...(request.until === undefined ? {} : { until: request.until }),
    ...(request.capture === undefined ? {} : { capture: request.capture }),
    commands: request.commands,
  };
}

/** A rerun may leave the selection out (`--resume` alone) but not change it, nor the file or where it reads. */
function checkResumable(request: ExportRequest, checkpoint: ExportCheckpoint, from: ExportCheckpoint['from'], checkpointPath: string): void {
  const selectionGiven = request.patterns !== undefined || request.since !== undefined || request.until !== undefined;
  if (selectionGiven && !sameSelection(selectionOf(request), checkpoint.selection)) {
    throw new UsageError(`${checkpointPath} continues another export (${JSON.stringify(checkpoint.selection)}); rerun with the same selection, or with --resume alone`);
  }
  if (request.out !== undefined && resolve(request.out) !== checkpoint.out) throw new UsageError(`${checkpointPath} continues the export into ${checkpoint.out}, not ${resolve(request.out)}`);
  if (!sameSource(from, checkpoint.from)) throw new UsageError(`${checkpointPath} continues an export from ${JSON.stringify(checkpoint.from)}, not ${JSON.stringify(from)}`);
}

/** Opens the output for appending, cut back to the bytes the checkpoint covers. */
function openOutput(checkpoint: ExportCheckpoint): number {
  const fd = openSync(checkpoint.out, existsSync(checkpoint.out) ? 'r+' : 'w+');
  const size = fstatSync(fd).size;
  if (size < checkpoint.bytes) {
    closeSync(fd);
    throw new Error(`${checkpoint.out} holds ${size} bytes, fewer than the ${checkpoint.bytes} its checkpoint covers: it was changed since; start a new export`);
  }
  // Lines written after the last checkpoint (a kill between a page and its checkpoint) are read again.
  if (size > checkpoint.bytes) ftruncateSync(fd, checkpoint.bytes);
  return fd;
}

/** Copies pages until every session is read (false) or `--max-events` is reached (true). Updates `checkpoint` in place. */
async function copySessions(source: HistorySource, request: ExportRequest, checkpoint: ExportCheckpoint, checkpointPath: string, fd: number, progress: WindowExportIo['progress']): Promise<boolean> {
  const { selection } = checkpoint;
  let written = 0;
  while (checkpoint.index < checkpoint.sessions.length) {
    const remaining = request.maxEvents === undefined ? request.pageSize : request.maxEvents - written;
    if (remaining <= 0) return true;
    // `limit` bounds the events a page reads, so a page never writes more than are left.
    const limit = String(Math.min(request.pageSize, remaining));
    const session = checkpoint.sessions[checkpoint.index] as string;
    const params: Record<string, string> =
      checkpoint.cursor === undefined
        ? {
            session,
            limit,
            ...(selection.since === undefined ? {} : { since: selection.since }),
            ...(selection.until === undefined ? {} : { until: selection.until }),
            ...(selection.capture === undefined ? {} : { capture: selection.capture }),
          }
        : { cursor: checkpoint.cursor, limit };
    const page = await source.page(params);
    let text = '';
    for (const line of page.lines) {
      if (selection.commands === 'omit' && isCommandLine(line)) {
        checkpoint.omittedCommands += 1;
        continue;
      }
      text += `${line}\n`;
      checkpoint.events += 1;
      written += 1;
    }
    // One write per page at the recorded offset, synced before the checkpoint that covers it.
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > 0) writeSync(fd, bytes, 0, bytes.length, checkpoint.bytes);
    fsyncSync(fd);
    checkpoint.bytes += bytes.length;
    if (page.next === undefined) {
      checkpoint.index += 1;
      delete checkpoint.cursor;
    } else checkpoint.cursor = page.next;
    writeCheckpoint(checkpointPath, checkpoint);
    progress?.(`exporting ${session} (${checkpoint.sessions.indexOf(session) + 1} of ${checkpoint.sessions.length} sessions): ${checkpoint.events} events`);
  }
  return false;
}

/** Whether a line is a control command (AEP-0004 §2.2). */
export function isCommandLine(line: string): boolean {
  try {
    return isCommandType((JSON.parse(line) as { type?: unknown }).type);
  } catch {
    return false;
  }
}
