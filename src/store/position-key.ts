/**
 * Encoding of a session history position as a string whose order is position order: the sort
 * key of a sequenced event (`P#` + this) and the `pos` of a seq-less one (`session-history.ts`).
 *
 * Sequenced events (AEP-0001 §7) sort by `(epoch, seq)`: both are zero-padded to 16 digits
 * (every safe integer fits), so string order is numeric order.
 *
 * Seq-less events the relay stores (commands, `attention.routed`: AEP-0001 §5.2's
 * foreign-emitter exception) have no position of their own. They are placed directly after
 * the newest sequenced position the session held when they arrived, and among themselves in
 * arrival order by a relay-minted ULID: `{anchor}~{ulid}`. A resume "strictly after (e, s)"
 * therefore includes every seq-less event that arrived after (e, s) was stored. A session
 * with no sequenced event yet anchors at `-`, which sorts before every position.
 *
 * Sessions are emitter-scoped (AEP-0001 §5.2): two emitters may hold the same `(epoch, seq)` of
 * one session name, so a sequenced event's key is its position followed by its emitter
 * (`{position}#{source digest}`, `emitterKey`). A bare position `P` (a resume token names no
 * emitter) orders before every emitter's event at `P` and `P~…` after all of them, so "strictly
 * after P" is "above `afterPositionKey(P)`", whoever emitted.
 */
import type { Position } from '../protocol/positions.ts';

const DIGITS = 16;
const SEQ_LESS_MARK = '~';
const EMITTER_MARK = '#';
const EMPTY_ANCHOR = '-';

function pad(value: number): string {
  return value.toString().padStart(DIGITS, '0');
}

/** Index sort key of a sequenced position. */
export function positionKey(epoch: number, seq: number): string {
  return `${pad(epoch)}.${pad(seq)}`;
}

/** The key of one emitter's event at a position: the position, then the emitter's source digest. */
export function emitterKey(epoch: number, seq: number, sourceDigest: string): string {
  return `${positionKey(epoch, seq)}${EMITTER_MARK}${sourceDigest}`;
}

/**
 * A key above every emitter's event at `(epoch, seq)` and below everything after it (seq-less
 * events anchored there included): the exclusive lower bound of "strictly after this position".
 */
export function afterPositionKey(epoch: number, seq: number): string {
  // `~` sorts above every hex digit of a source digest and `#` below `~`.
  return `${positionKey(epoch, seq)}${EMITTER_MARK}${SEQ_LESS_MARK}`;
}

/** The source digest an emitter key ends with; undefined for a seq-less key. */
export function emitterOfKey(key: string): string | undefined {
  const mark = key.indexOf(EMITTER_MARK);
  return mark === -1 || key.includes(SEQ_LESS_MARK) ? undefined : key.slice(mark + 1);
}

/** Index sort key of a seq-less event anchored after `anchorKey` (a key read from the index, or undefined). */
export function seqLessKey(anchorKey: string | undefined, arrivalId: string): string {
  const anchor = anchorKey === undefined ? EMPTY_ANCHOR : anchorOf(anchorKey);
  return `${anchor}${SEQ_LESS_MARK}${arrivalId}`;
}

/** The sequenced position part of any index key (a seq-less key's anchor). */
function anchorOf(key: string): string {
  const mark = key.search(/[#~]/);
  return mark === -1 ? key : key.slice(0, mark);
}

/**
 * The position an index key stands at: its own for a sequenced event, its anchor for a
 * seq-less one (`{epoch: 0, seq: 0}` when it precedes every position).
 */
export function positionOfKey(session: string, key: string): Position {
  const anchor = anchorOf(key);
  if (anchor === EMPTY_ANCHOR) return { session, epoch: 0, seq: 0 };
  const [epochDigits = '0', seqDigits = '0'] = anchor.split('.');
  return { session, epoch: Number(epochDigits), seq: Number(seqDigits) };
}
