/**
 * What every paged read (`GET /history`, `GET /sessions`) does before it reads: the consume
 * scope, the page limit, and the query, either parsed from the parameters or carried by the
 * request's signed cursor (with the store's continuation); and, after reading, the signed
 * cursor of the next page.
 */
import { hasScope } from '../../auth/principal.ts';
import type { Principal } from '../../auth/principal.ts';
import { forbidden } from '../../errors/relay-error.ts';
import type { CursorKeysPort } from '../ports/cursor-keys.ts';
import { pageLimitOf, refuseAlongsideCursor } from './query-params.ts';
import type { QueryParams } from './query-params.ts';
import { openCursor, signCursor } from './signed-cursor.ts';
import type { CursorContent } from './signed-cursor.ts';

export interface PagedRequest<Query> {
  query: Query;
  limit: number;
  /** The store's continuation, when this request continues a listing. */
  storeCursor?: string;
  /** Signs the next page's cursor from the store's continuation. */
  nextCursor(storeCursor: string | undefined): string | undefined;
}

export interface PagedRequestShape<Query> {
  kind: CursorContent<Query>['kind'];
  /** The parameters a cursor replaces. */
  queryParams: readonly string[];
  parse(params: QueryParams): Query;
}

export async function pagedRequest<Query>(cursorKeys: CursorKeysPort, principal: Principal, params: QueryParams, shape: PagedRequestShape<Query>): Promise<PagedRequest<Query>> {
  if (!hasScope(principal, 'consume')) throw forbidden('this token lacks the consume scope');
  const limit = pageLimitOf(params);
  const key = await cursorKeys.cursorKey();
  const { tenant } = principal;
  let query: Query;
  let storeCursor: string | undefined;
  if (params.cursor !== undefined) {
    refuseAlongsideCursor(params, shape.queryParams);
    const opened = openCursor<Query>(key, params.cursor, { kind: shape.kind, tenant });
    query = opened.query;
    storeCursor = opened.next;
  } else {
    query = shape.parse(params);
  }
  return {
    query,
    limit,
    ...(storeCursor === undefined ? {} : { storeCursor }),
    nextCursor: (next) => (next === undefined ? undefined : signCursor(key, { kind: shape.kind, tenant, query, next })),
  };
}
