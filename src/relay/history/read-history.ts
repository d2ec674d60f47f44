/**
 * `GET /history` as a use case: one page of a session's stored history, as the NDJSON lines
 * a consumer reads back with the JSONL binding (AEP-0003 §3.1). Each line is the stored text
 * as admitted (byte identity, AEP-0004 §4.4) unless the request's capture ceiling down-levels
 * it (AEP-0001 §8.2, the same rule as every delivery); lines are in `(epoch, seq)` order
 * (or its reverse) with commands in their place (AEP-0001 §7.3).
 *
 * Which commands came from a verified sender (AEP-0003 §8.3) is the relay's finding stored
 * beside the text, so it is returned beside the lines (`verifiedSenders`), never in them.
 *
 * History is this relay's product surface beyond the replay window (AEP-0001 §7.5): it shows
 * what the log still holds, never what has expired, and never agent-scoped events (which are
 * not stored).
 */
import type { Principal } from '../../auth/principal.ts';
import { compileFilter } from '../../protocol/attr-match.ts';
import { deliveryText, parseStored } from '../domain/delivery-text.ts';
import { readCeilingOf } from '../domain/read-ceiling.ts';
import type { SenderVerified } from '../domain/stored-event.ts';
import type { Person } from '../../auth/oidc/person.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import { parseHistoryQuery, HISTORY_QUERY_PARAMS } from './history-request.ts';
import { pagedRequest } from './paged-request.ts';
import type { QueryParams } from './query-params.ts';

/** Most bytes of event text one page answers (a Lambda response carries at most 6 MB). */
export const HISTORY_PAGE_MAX_BYTES = 4 * 1024 * 1024;
/**
 * The same for the JSON page format, whose texts are JSON strings: escaping at most doubles
 * a text (`"`, `\`, tab and CR between tokens each become two bytes), so 2.5 MiB stays within
 * the 6 MB response with room for the item envelopes.
 */
export const HISTORY_JSON_PAGE_MAX_BYTES = 2.5 * 1024 * 1024;

export interface HistoryPageResult {
  /** One event text per line, without newlines. */
  lines: string[];
  /** By index into `lines`: the commands sent by a verified connection, and its operator. */
  verifiedSenders: ReadonlyMap<number, SenderVerified>;
  /** By index into `lines`: the commands sent with a signed-in person's credential, and the person. */
  signedInSenders: ReadonlyMap<number, Person>;
  /** Signed cursor of the next page; absent when the range is read to its end. */
  next?: string;
}

export async function readHistory(
  runtime: Pick<RelayPorts, 'eventLog' | 'cursorKeys'>,
  principal: Principal,
  params: QueryParams,
  maxBytes: number = HISTORY_PAGE_MAX_BYTES,
): Promise<HistoryPageResult> {
  const request = await pagedRequest(runtime.cursorKeys, principal, params, { kind: 'history', queryParams: HISTORY_QUERY_PARAMS, parse: parseHistoryQuery });
  const { query } = request;
  const page = await runtime.eventLog.historyPage(principal.tenant, query.session, query.range, { limit: request.limit, maxBytes }, request.storeCursor);
  const matches = query.filter === undefined ? undefined : compileFilter(query.filter);
  // The token's ceiling applies on every page; a cursor carries only the request's.
  const ceiling = readCeilingOf(query.ceiling, principal);
  const lines: string[] = [];
  const verifiedSenders = new Map<number, SenderVerified>();
  const signedInSenders = new Map<number, Person>();
  for (const item of page.items) {
    const event = parseStored(item.raw);
    if (event === undefined || (matches !== undefined && !matches(event))) continue;
    if (item.senderVerified !== undefined) verifiedSenders.set(lines.length, item.senderVerified);
    if (item.sentBy !== undefined) signedInSenders.set(lines.length, item.sentBy);
    lines.push(deliveryText(item.raw, event, ceiling));
  }
  const next = request.nextCursor(page.cursor);
  return next === undefined ? { lines, verifiedSenders, signedInSenders } : { lines, verifiedSenders, signedInSenders, next };
}
