/**
 * The subscription a `GET /stream` request asks for (AEP-0003 §3.3): `filter`, `capture`
 * ceiling, `from` (positions or `all`, taking precedence over `Last-Event-ID`) and `live`.
 * Anything malformed is refused before any stream header is written.
 */
import { badRequest, RelayError } from '../../errors/relay-error.ts';
import { compileFilter, sessionEqualityOf, typeSegmentsOf } from '../../protocol/attr-match.ts';
import { identifierTooLong, illFormedIdentifier, tooManyIndexEntries } from '../ingest/admission.ts';
import type { EventMatcher, Filter } from '../../protocol/attr-match.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import { parseFrom, parseSseId } from '../../protocol/positions.ts';
import { querySelectionOf } from '../subscribe/query-selection.ts';
import type { Position } from '../../protocol/positions.ts';

export interface StreamRequest {
  filter: Filter;
  matches: EventMatcher;
  ceiling?: CaptureLevel;
  from?: 'all' | Position[];
  /** `live=0`: replay, then end the stream. */
  live: boolean;
}

export function parseStreamRequest(query: Readonly<Record<string, string | undefined>>, lastEventId: string | undefined, maxPositions: number): StreamRequest | RelayError {
  const selection = querySelectionOf(query);
  if (selection instanceof RelayError) return selection;
  const filter: Filter = selection.filter ?? {};
  const ceiling = selection.ceiling;
  let from: 'all' | Position[] | undefined;
  if (query.from !== undefined) {
    let value: unknown = 'all';
    if (query.from !== 'all') {
      try {
        value = JSON.parse(query.from);
      } catch {
        return badRequest('invalid-filter', 'from is the literal all or a URL-encoded JSON array of {session, epoch, seq}');
      }
    }
    const parsed = parseFrom(value, { maxPositions });
    if (!parsed.ok) return badRequest(parsed.code, parsed.detail);
    from = parsed.from;
  } else if (lastEventId !== undefined && lastEventId !== '') {
    const position = parseSseId(lastEventId);
    if (position === undefined) return badRequest('invalid-filter', 'Last-Event-ID is not a {session}:{epoch}:{seq} position');
    from = [position];
  }
  const live = query.live === undefined || query.live === '1' || query.live === 'true';
  if (!live && query.live !== '0' && query.live !== 'false') return badRequest('invalid-filter', 'live is 0 or 1');
  // Each names a key the relay writes (a type pattern's first segment keys its index entry).
  const named = { session: [...(sessionEqualityOf(filter) ?? []), ...(Array.isArray(from) ? from.map((position) => position.session) : [])], 'type segment': typeSegmentsOf(filter) };
  const illFormed = illFormedIdentifier(named);
  if (illFormed !== undefined) return badRequest('invalid-filter', illFormed);
  const tooLong = identifierTooLong(named);
  if (tooLong !== undefined) return badRequest('limit-exceeded', tooLong);
  const tooMany = tooManyIndexEntries({ sessions: sessionEqualityOf(filter), typeSegments: typeSegmentsOf(filter) });
  if (tooMany !== undefined) return badRequest('limit-exceeded', tooMany);
  return { filter, matches: compileFilter(filter), ...(ceiling === undefined ? {} : { ceiling }), ...(from === undefined ? {} : { from }), live };
}
