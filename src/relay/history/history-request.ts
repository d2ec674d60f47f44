/**
 * What a `GET /history` request asks for: one session, a position range (`after` / `before`,
 * exclusive, written `{epoch}:{seq}`) and/or an admission time window (`since` / `until`),
 * an attr-match `filter` (AEP-0003 §6), a `capture` ceiling (AEP-0003 §6.4) and the `order`.
 * Normalized, it is what a history cursor carries.
 */
import { badRequest, RelayError } from '../../errors/relay-error.ts';
import type { Filter } from '../../protocol/attr-match.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import { comparePositions } from '../../protocol/positions.ts';
import { identifierTooLong } from '../ingest/admission.ts';
import type { HistoryRange } from '../domain/history.ts';
import { querySelectionOf } from '../subscribe/query-selection.ts';
import { instantOf } from './query-params.ts';
import type { QueryParams } from './query-params.ts';

export interface HistoryQuery {
  session: string;
  range: HistoryRange;
  filter?: Filter;
  ceiling?: CaptureLevel;
}

/** Query parameters a cursor replaces. */
export const HISTORY_QUERY_PARAMS = ['session', 'after', 'before', 'since', 'until', 'filter', 'capture', 'order'] as const;

export function parseHistoryQuery(params: QueryParams): HistoryQuery {
  const session = params.session;
  if (session === undefined || session === '') throw badRequest('invalid-query', 'session is required');
  const tooLong = identifierTooLong({ session });
  if (tooLong !== undefined) throw badRequest('invalid-query', tooLong);
  const after = positionParam(params, 'after');
  const before = positionParam(params, 'before');
  // An empty range is a client mistake (and not a key range the store can express).
  if (after !== undefined && before !== undefined && comparePositions(after, before) >= 0) throw badRequest('invalid-query', 'after must be below before');
  const sinceMs = instantOf(params, 'since');
  const untilMs = instantOf(params, 'until');
  const order = params.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw badRequest('invalid-query', 'order is asc or desc');
  const range: HistoryRange = {
    order,
    ...(after === undefined ? {} : { after }),
    ...(before === undefined ? {} : { before }),
    ...(sinceMs === undefined ? {} : { sinceMs }),
    ...(untilMs === undefined ? {} : { untilMs }),
  };
  const selection = querySelectionOf(params);
  if (selection instanceof RelayError) throw selection;
  return { session, range, ...selection };
}

function positionParam(params: QueryParams, name: string): { epoch: number; seq: number } | undefined {
  const text = params[name];
  if (text === undefined) return undefined;
  const match = /^(0|[1-9][0-9]{0,15}):(0|[1-9][0-9]{0,15})$/.exec(text);
  const epoch = Number(match?.[1]);
  const seq = Number(match?.[2]);
  if (match === null || !Number.isSafeInteger(epoch) || !Number.isSafeInteger(seq)) throw badRequest('invalid-query', `${name} is a position written {epoch}:{seq}`);
  return { epoch, seq };
}
