/**
 * The `filter` (an attr-match object, AEP-0003 §6) and `capture` ceiling (AEP-0003 §6.4) a GET
 * query names, parsed the same way for `GET /stream` and `GET /history`.
 */
import { badRequest } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import { validateFilter } from '../../protocol/attr-match.ts';
import type { Filter } from '../../protocol/attr-match.ts';
import { isCaptureLevel } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

export interface QuerySelection {
  filter?: Filter;
  ceiling?: CaptureLevel;
}

export function querySelectionOf(query: Readonly<Record<string, string | undefined>>): QuerySelection | RelayError {
  const selection: QuerySelection = {};
  if (query.filter !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(query.filter);
    } catch {
      return badRequest('invalid-filter', 'filter is not JSON (URL-encode an attr-match object)');
    }
    const validation = validateFilter(value);
    if (!validation.ok) return badRequest('invalid-filter', validation.reason);
    selection.filter = validation.filter;
  }
  if (query.capture !== undefined) {
    if (!isCaptureLevel(query.capture)) return badRequest('invalid-filter', 'capture must be one of none, metadata, redacted, full');
    selection.ceiling = query.capture;
  }
  return selection;
}
