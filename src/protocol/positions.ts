/**
 * Resume positions: `(session, epoch, seq)` triples (AEP-0001 §7, AEP-0003 §7), their order,
 * their SSE `id:` carriage (AEP-0003 §3.3), and the `from` member shared by the WS
 * `subscribe` frame and the SSE `from` query (AEP-0003 §5, §6.5).
 */
import type { AepEvent, JsonValue } from './event.ts';
import { isJsonObject } from './event.ts';

/** A point in one session's stream; delivery resumes strictly after it (AEP-0003 §7). */
export interface Position {
  session: string;
  epoch: number;
  seq: number;
}

/**
 * `seq: -1` with `epoch: 0` in a `from` position names the place before a session's first
 * position: "everything this session holds". It is how the protocol's official TypeScript
 * client names a session it knows but has seen no events of. It is accepted only in `from`
 * (never on an event, where `seq` is an integer >= 0, AEP-0001 §5.1 #11) and only with epoch 0,
 * and it orders before every real position.
 */
export const BEFORE_FIRST_SEQ = -1;

/** Whether a resume position is the place before the session's first position. */
export function isBeforeFirst(position: Pick<Position, 'epoch' | 'seq'>): boolean {
  return position.epoch === 0 && position.seq === BEFORE_FIRST_SEQ;
}

/** Orders two positions of one session lexicographically by `(epoch, seq)` (AEP-0001 §7 rule 3). */
export function comparePositions(a: Pick<Position, 'epoch' | 'seq'>, b: Pick<Position, 'epoch' | 'seq'>): number {
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  return 0;
}

function isCounter(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The position of a sequenced session-scoped event; `undefined` for agent-scoped events and
 * foreign-emitter session events, which carry no `seq` (AEP-0001 §5.2). `epoch` defaults to 0.
 */
export function positionOf(event: AepEvent | { readonly [attribute: string]: JsonValue | undefined }): Position | undefined {
  const { session, seq } = event;
  const epoch = event.epoch ?? 0;
  if (typeof session !== 'string' || session === '' || !isCounter(seq) || !isCounter(epoch)) return undefined;
  return { session, epoch, seq };
}

/** CR and LF end an SSE field and NUL makes browsers drop the id (WHATWG SSE): never emit them. */
const UNSAFE_IN_SSE_ID = /[\r\n\0]/;

/**
 * Encodes a position as the SSE `id:` value `{session}:{epoch}:{seq}` (AEP-0003 §3.3 rule 2).
 * Returns `undefined` when the session contains CR, LF or NUL: sessions are arbitrary
 * producer strings (AEP-0003 §9.6) and such an id would inject SSE fields, so the caller
 * sends the event without an `id:` line (it is then not resumable by `Last-Event-ID`).
 */
export function encodeSseId(position: Position): string | undefined {
  if (position.session === '' || UNSAFE_IN_SSE_ID.test(position.session)) return undefined;
  if (!isCounter(position.epoch) || !isCounter(position.seq)) return undefined;
  return `${position.session}:${position.epoch}:${position.seq}`;
}

/** Canonical decimal counter: no sign, no leading zeros, no exponent. */
const COUNTER_TEXT = /^(?:0|[1-9][0-9]*)$/;

function parseCounter(text: string): number | undefined {
  if (!COUNTER_TEXT.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Parses a `Last-Event-ID` value minted by {@link encodeSseId}. Splits at the last two colons,
 * so sessions may themselves contain `:`. Returns `undefined` for anything else.
 */
export function parseSseId(text: string): Position | undefined {
  if (typeof text !== 'string' || UNSAFE_IN_SSE_ID.test(text)) return undefined;
  const seqColon = text.lastIndexOf(':');
  if (seqColon <= 0) return undefined;
  const epochColon = text.lastIndexOf(':', seqColon - 1);
  if (epochColon <= 0) return undefined;
  const session = text.slice(0, epochColon);
  const epoch = parseCounter(text.slice(epochColon + 1, seqColon));
  const seq = parseCounter(text.slice(seqColon + 1));
  if (epoch === undefined || seq === undefined) return undefined;
  return { session, epoch, seq };
}

/** Endpoint limits that bound a `from` request. */
export interface FromLimits {
  /** Most resume positions one request may carry (AEP-0003 §6.5 `limit-exceeded`). */
  maxPositions: number;
}

/** Outcome of {@link parseFrom}; codes come from the closed subscribe refusal set (AEP-0003 §6.5). */
export type FromParse =
  | { ok: true; from: 'all' | Position[] }
  | { ok: false; code: 'invalid-filter' | 'limit-exceeded'; detail: string };

/**
 * Parses an already JSON-decoded `from` member: the literal `all` (replay-all, AEP-0003 §5) or
 * an array of `{session, epoch, seq}` triples. Never throws.
 *
 * Repeated sessions are legal and the EARLIEST position per session is kept (first-seen order).
 * A session name is unique only per emitter (AEP-0001 §5.2), so a consumer may hold two
 * positions for one name; replaying from the earlier one can only redeliver, which dedupe on
 * `(source, id)` absorbs, whereas keeping the later one could skip events. Unknown members of
 * a triple are ignored for forward compatibility; all three known members are required.
 */
export function parseFrom(value: unknown, limits: FromLimits): FromParse {
  if (value === 'all') return { ok: true, from: 'all' };
  if (!Array.isArray(value)) {
    return { ok: false, code: 'invalid-filter', detail: 'from must be the string "all" or an array of {session, epoch, seq} positions' };
  }
  // Checked before touching any element so an oversized array costs nothing to refuse.
  if (value.length > limits.maxPositions) {
    return {
      ok: false,
      code: 'limit-exceeded',
      detail: `from carries ${value.length} resume positions; the limit (maxPositions) is ${limits.maxPositions}`,
    };
  }
  const earliest = new Map<string, Position>();
  for (let index = 0; index < value.length; index += 1) {
    const entry: unknown = value[index];
    if (!isJsonObject(entry)) {
      return { ok: false, code: 'invalid-filter', detail: `from[${index}] must be an object {session, epoch, seq}` };
    }
    const { session, epoch, seq } = entry;
    if (typeof session !== 'string' || session === '') {
      return { ok: false, code: 'invalid-filter', detail: `from[${index}].session must be a non-empty string` };
    }
    if (!isCounter(epoch)) {
      return { ok: false, code: 'invalid-filter', detail: `from[${index}].epoch must be an integer >= 0` };
    }
    const position = isCounter(seq) ? seq : isBeforeFirst({ epoch, seq: seq as unknown as number }) ? BEFORE_FIRST_SEQ : undefined;
    if (position === undefined) {
      return { ok: false, code: 'invalid-filter', detail: `from[${index}].seq must be an integer >= 0 (or -1 with epoch 0: before the first position)` };
    }
    const seen = earliest.get(session);
    if (seen === undefined || comparePositions({ epoch, seq: position }, seen) < 0) earliest.set(session, { session, epoch, seq: position });
  }
  return { ok: true, from: [...earliest.values()] };
}
