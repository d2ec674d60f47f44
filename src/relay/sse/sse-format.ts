/**
 * Server-Sent Events framing for AEP (AEP-0003 §3.3): one message per event with `event:` the
 * type, `data:` the event JSON on one line, and `id:` `{session}:{epoch}:{seq}` for
 * session-scoped sequenced events only; comments for markers and heartbeats.
 */
import type { AepEvent } from '../../protocol/event.ts';
import { encodeSseId, positionOf } from '../../protocol/positions.ts';

/** One SSE message for an event delivered as `text` (the stored or down-leveled JSON). */
export function sseEventMessage(event: AepEvent, text: string): string {
  // JSON text can only contain a line break as whitespace between tokens; re-serialize then.
  const data = /[\r\n]/.test(text) ? JSON.stringify(JSON.parse(text)) : text;
  const position = positionOf(event);
  // encodeSseId refuses sessions with CR/LF/NUL (header injection); such events carry no id.
  const id = position === undefined ? undefined : encodeSseId(position);
  return `event: ${event.type}\ndata: ${data}\n${id === undefined ? '' : `id: ${id}\n`}\n`;
}

/** An SSE comment line; newlines in the text are folded so it stays one comment. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

export function replayExhaustedComment(session: string, earliest: { epoch: number; seq: number }): string {
  return sseComment(`replay-exhausted ${session} ${earliest.epoch}:${earliest.seq}`);
}
