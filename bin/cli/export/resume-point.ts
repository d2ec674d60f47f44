/**
 * Where an export resumes from an output file it wrote before. A run that stopped may have
 * left a torn last line (no newline): it is cut off. The resume position is the last complete
 * line's sequenced position; seq-less events (commands) after it are anchored at that same
 * position and come back again from `after`, so their `(source, id)` (the dedupe key,
 * AEP-0001 §7.4) are remembered and skipped.
 */
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync } from 'node:fs';

export interface ResumePoint {
  /** `{epoch}:{seq}` for `GET /history?after=`; absent to start from the beginning. */
  after?: string;
  /** `(source, id)` keys already written after that position. */
  written: Set<string>;
  /** Complete lines already in the file. */
  lines: number;
}

export function dedupeKey(line: string): string {
  const event = JSON.parse(line) as { source?: unknown; id?: unknown };
  return `${String(event.source)}\u0000${String(event.id)}`;
}

/** Reads (and repairs) the file; an absent or empty file resumes from the start. */
export function resumePointOf(path: string): ResumePoint {
  if (!existsSync(path)) return { written: new Set(), lines: 0 };
  const text = readFileSync(path, 'utf8');
  const complete = text.lastIndexOf('\n') + 1;
  if (complete !== text.length) {
    const fd = openSync(path, 'r+');
    ftruncateSync(fd, Buffer.byteLength(text.slice(0, complete), 'utf8'));
    closeSync(fd);
  }
  const lines = text.slice(0, complete).split('\n').filter((line) => line !== '');
  const written = new Set<string>();
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index] as string;
    const event = JSON.parse(line) as { seq?: unknown; epoch?: unknown };
    if (typeof event.seq === 'number') {
      const epoch = typeof event.epoch === 'number' ? event.epoch : 0;
      return { after: `${epoch}:${event.seq}`, written, lines: lines.length };
    }
    written.add(dedupeKey(line));
  }
  return { written, lines: lines.length };
}
