/**
 * Decides a `subscribe` (AEP-0003 §6.5): its filter, capture ceiling and resume positions
 * are accepted together as one subscription, or refused with a code from the closed set.
 */
import type { Filter, EventMatcher } from './attr-match.ts';
import { compileFilter, validateFilter } from './attr-match.ts';
import type { JsonObject } from './event.ts';
import { isJsonObject } from './event.ts';
import type { SubscribeErrorCode } from './frames.ts';
import type { CaptureLevel } from './levels.ts';
import { isCaptureLevel } from './levels.ts';
import type { Position } from './positions.ts';
import { parseFrom } from './positions.ts';

/** Endpoint limits and features that decide a `subscribe`. */
export interface SubscribeLimits {
  /** Most `from` resume positions one subscription may carry. */
  maxPositions: number;
  /** Whether `from: "all"` is implemented (AEP-0003 §5); refused as `invalid-filter` when not. Default true. */
  replayAll?: boolean;
}

/** A subscription ready for fan-out. */
export interface Subscription {
  id: string;
  filter: Filter;
  /** The filter compiled once at subscribe time. */
  matches: EventMatcher;
  /** Down-level ceiling (AEP-0003 §6.4); absent means "as stored". */
  capture?: CaptureLevel;
  /** Replay request (AEP-0003 §5); absent means live only. */
  from?: 'all' | Position[];
}

/** A refused `subscribe`: the frame to send back, with a code from the closed set. */
export interface SubscribeRefusal {
  type: 'error';
  id?: string;
  code: SubscribeErrorCode;
  detail: string;
}

export type SubscribeParse = ({ ok: true } & Subscription) | { ok: false; error: SubscribeRefusal };

function refuse(code: SubscribeErrorCode, detail: string, id?: string): SubscribeParse {
  return { ok: false, error: id === undefined ? { type: 'error', code, detail } : { type: 'error', id, code, detail } };
}

/**
 * Validates a `subscribe` (AEP-0003 §6.5): the whole request is accepted or refused, never
 * partially. An absent `filter` means `{}` (the spec's match-all spelling); an explicit
 * `null` filter, an invalid `from`, or an unknown capture level is `invalid-filter`.
 * Accepts the `subscribe` member of a parsed message or a raw frame object.
 */
export function parseSubscribe(raw: unknown, limits: SubscribeLimits): SubscribeParse {
  if (!isJsonObject(raw)) return refuse('invalid-filter', 'subscribe must be a JSON object');
  const frame: JsonObject = raw;
  const id = frame['id'];
  if (typeof id !== 'string') return refuse('invalid-filter', 'subscribe needs a string "id"');

  const rawFilter = Object.hasOwn(frame, 'filter') ? frame['filter'] : undefined;
  const validated = validateFilter(rawFilter === undefined ? {} : rawFilter);
  if (!validated.ok) return refuse('invalid-filter', validated.reason, id);

  const subscription: Subscription = { id, filter: validated.filter, matches: compileFilter(validated.filter) };

  const capture = Object.hasOwn(frame, 'capture') ? frame['capture'] : undefined;
  if (capture !== undefined) {
    if (!isCaptureLevel(capture)) {
      return refuse('invalid-filter', 'capture ceiling must be one of none, metadata, redacted, full', id);
    }
    subscription.capture = capture;
  }

  const from = Object.hasOwn(frame, 'from') ? frame['from'] : undefined;
  if (from !== undefined) {
    const parsed = parseFrom(from, { maxPositions: limits.maxPositions });
    if (!parsed.ok) return refuse(parsed.code, parsed.detail, id);
    if (parsed.from === 'all' && limits.replayAll === false) {
      return refuse('invalid-filter', 'from "all" (replay-all) is not implemented by this endpoint', id);
    }
    subscription.from = parsed.from;
  }
  return { ok: true, ...subscription };
}
