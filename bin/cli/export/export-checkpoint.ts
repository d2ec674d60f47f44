/**
 * The checkpoint of a tenant-wide export: what it selects, the sessions chosen when it began,
 * where it stands (the session in progress and the signed cursor of its next page) and how many
 * bytes of the output file that covers. Written after every page, once the page's lines are in
 * the file (and synced): write to a temporary file, then rename over the checkpoint, so a kill at
 * any moment leaves the old checkpoint or the new one, whole. The output may then hold lines past
 * the checkpoint (written before the kill, not yet recorded): a resume cuts the file back to the
 * recorded bytes and reads that page again from its cursor, so nothing is written twice or
 * skipped, whatever the events are (several emitters in one session, seq-less ones, a window).
 *
 * The cursor is the relay's own (signed, bound to the tenant, carrying its query): it needs a
 * consume token of the same tenant to be read again, and carries no secret of its own.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { CaptureLevel } from '../../../src/protocol/levels.ts';
import type { CommandsInExport } from './export-arguments.ts';

export interface ExportSelection {
  patterns?: string[];
  since?: string;
  until?: string;
  capture?: CaptureLevel;
  commands: CommandsInExport;
}

export interface ExportCheckpoint {
  v: 1;
  /** The relay read (HTTP mode) or the tenant (direct mode); a resume must read the same. */
  from: { url: string } | { tenant: string };
  out: string;
  selection: ExportSelection;
  /** Session names, in the order exported. */
  sessions: string[];
  /** The session in progress (its index in `sessions`; `sessions.length` once all are done). */
  index: number;
  /** The signed cursor of its next page; absent: the session's first page. */
  cursor?: string;
  /** Bytes of `out` the checkpoint covers. */
  bytes: number;
  events: number;
  omittedCommands: number;
}

export function readCheckpoint(path: string): ExportCheckpoint | undefined {
  if (!existsSync(path)) return undefined;
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ExportCheckpoint>;
  if (parsed.v !== 1 || !Array.isArray(parsed.sessions) || typeof parsed.index !== 'number' || typeof parsed.bytes !== 'number' || typeof parsed.out !== 'string') {
    throw new Error(`${path} is not an aep-relay export checkpoint`);
  }
  return parsed as ExportCheckpoint;
}

export function writeCheckpoint(path: string, checkpoint: ExportCheckpoint): void {
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(checkpoint)}\n`);
  renameSync(temporary, path);
}

/** Whether two selections ask for the same export (a resume may not change it). */
export function sameSelection(left: ExportSelection, right: ExportSelection): boolean {
  return JSON.stringify(normalized(left)) === JSON.stringify(normalized(right));
}

function normalized(selection: ExportSelection): unknown[] {
  return [selection.patterns ?? [], selection.since ?? null, selection.until ?? null, selection.capture ?? null, selection.commands];
}

export function sameSource(left: ExportCheckpoint['from'], right: ExportCheckpoint['from']): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}
