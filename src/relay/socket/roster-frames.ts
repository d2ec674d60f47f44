/**
 * Splitting a `roster` reply (AEP-0003 §4.1) into frames that each fit API Gateway's 32 KB
 * WebSocket frame. One tenant's claims can be many, and each carries its claimant's hello
 * declarations verbatim; a single reply could exceed what PostToConnection takes (128 KB, a
 * 413), and one emitter's large declarations would then deny the roster to every consumer.
 *
 * Every part is a complete `roster` frame with the request's `id`; all but the last carry
 * `"more": true` (an extension member: a consumer unaware of it reads the first part as a
 * snapshot, which §4.1 rule 6 already says a roster is). Entries are never split or merged.
 * Each entry fits, because hello declarations are bounded (`hello-bounds.ts`).
 */
import { rosterReply } from '../../protocol/frames.ts';
import type { RosterEntry } from '../../protocol/frames.ts';

/** API Gateway's WebSocket frame size quota. */
export const MAX_FRAME_BYTES = 32 * 1024;

export function rosterFrames(id: string, entries: readonly RosterEntry[], maxBytes = MAX_FRAME_BYTES): string[] {
  const frames: string[] = [];
  let part: RosterEntry[] = [];
  // The frame's own members (type, id, entries, "more":true) plus the commas between entries.
  const overhead = Buffer.byteLength(JSON.stringify({ ...rosterReply(id, []), more: true }), 'utf8');
  let bytes = overhead;
  for (const entry of rosterReply(id, entries).entries) {
    const size = Buffer.byteLength(JSON.stringify(entry), 'utf8') + 1;
    if (part.length > 0 && bytes + size > maxBytes) {
      frames.push(JSON.stringify({ ...rosterReply(id, part), more: true }));
      part = [];
      bytes = overhead;
    }
    part.push(entry);
    bytes += size;
  }
  frames.push(JSON.stringify(rosterReply(id, part)));
  return frames;
}
