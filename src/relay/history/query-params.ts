/** Parsing shared by the paged-read query strings (`GET /history`, `GET /sessions`). */
import { badRequest } from '../../errors/relay-error.ts';

export type QueryParams = Readonly<Record<string, string | undefined>>;

/** Most items one page reads; the default when `limit` is absent. */
export const MAX_PAGE_LIMIT = 1000;
export const DEFAULT_PAGE_LIMIT = 100;

export function pageLimitOf(params: QueryParams): number {
  const text = params.limit;
  if (text === undefined) return DEFAULT_PAGE_LIMIT;
  const value = /^[1-9][0-9]{0,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw badRequest('invalid-query', 'limit is a positive integer');
  if (value > MAX_PAGE_LIMIT) throw badRequest('limit-exceeded', `limit is at most ${MAX_PAGE_LIMIT}`);
  return value;
}

/** An instant as RFC 3339 text (`2026-11-30T17:00:00Z`) or epoch milliseconds, in epoch ms. */
export function instantOf(params: QueryParams, name: string): number | undefined {
  const text = params[name];
  if (text === undefined) return undefined;
  const value = /^[0-9]{1,15}$/.test(text) ? Number(text) : /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(value)) throw badRequest('invalid-query', `${name} is an RFC 3339 time or epoch milliseconds`);
  return value;
}

/** With a cursor, only `limit` (and the token) may accompany it: the cursor carries the rest of the query. */
export function refuseAlongsideCursor(params: QueryParams, names: readonly string[]): void {
  const given = names.filter((name) => params[name] !== undefined);
  if (given.length > 0) throw badRequest('invalid-query', `a cursor carries its query; send it with limit only, not ${given.join(', ')}`);
}

/** A `Link` header naming the next page (RFC 8288). */
export function nextLink(path: string, cursor: string, limit: number | undefined): string {
  const query = new URLSearchParams({ cursor, ...(limit === undefined ? {} : { limit: String(limit) }) });
  return `<${path}?${query.toString()}>; rel="next"`;
}
