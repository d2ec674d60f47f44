/**
 * `GET /sessions` as a use case: the tenant's sessions, newest activity first, from the
 * summaries fan-out maintains (never a scan of the log), each marked claimed when a live
 * control claim (AEP-0004 §4.5) holds it now. Filters: `agent`, `prefix` (of the session id),
 * `since` / `until` (sessions with activity in that window).
 */
import { hasScope } from '../../auth/principal.ts';
import type { Principal } from '../../auth/principal.ts';
import { forbidden } from '../../errors/relay-error.ts';
import type { JsonObject } from '../../protocol/event.ts';
import type { SessionFilter, SessionSummary } from '../domain/history.ts';
import type { RelayRuntime } from '../runtime.ts';
import { instantOf, pageLimitOf, refuseAlongsideCursor } from './query-params.ts';
import type { QueryParams } from './query-params.ts';
import { openCursor, signCursor } from './signed-cursor.ts';

const SESSION_QUERY_PARAMS = ['agent', 'prefix', 'since', 'until'] as const;

export interface SessionsPageResult {
  sessions: JsonObject[];
  next?: string;
}

export async function listSessions(runtime: Pick<RelayRuntime, 'sessionSummaries' | 'claims' | 'cursorKeys'>, principal: Principal, params: QueryParams): Promise<SessionsPageResult> {
  if (!hasScope(principal, 'consume')) throw forbidden('this token lacks the consume scope');
  const limit = pageLimitOf(params);
  const key = await runtime.cursorKeys.cursorKey();
  let filter: SessionFilter;
  let storeCursor: string | undefined;
  if (params.cursor !== undefined) {
    refuseAlongsideCursor(params, SESSION_QUERY_PARAMS);
    const opened = openCursor<SessionFilter>(key, params.cursor, { kind: 'sessions', tenant: principal.tenant });
    filter = opened.query;
    storeCursor = opened.next;
  } else {
    filter = sessionFilterOf(params);
  }
  const [page, claims] = await Promise.all([runtime.sessionSummaries.listSummaries(principal.tenant, filter, limit, storeCursor), runtime.claims.allClaims(principal.tenant)]);
  const claimed = new Set(claims.map((claim) => claim.session));
  const sessions = page.items.map((summary) => sessionView(summary, claimed.has(summary.session)));
  if (page.cursor === undefined) return { sessions };
  return { sessions, next: signCursor(key, { kind: 'sessions', tenant: principal.tenant, query: filter, next: page.cursor }) };
}

function sessionFilterOf(params: QueryParams): SessionFilter {
  const sinceMs = instantOf(params, 'since');
  const untilMs = instantOf(params, 'until');
  return {
    ...(params.agent === undefined ? {} : { agent: params.agent }),
    ...(params.prefix === undefined ? {} : { prefix: params.prefix }),
    ...(sinceMs === undefined ? {} : { sinceMs }),
    ...(untilMs === undefined ? {} : { untilMs }),
  };
}

function sessionView(summary: SessionSummary, claimed: boolean): JsonObject {
  return {
    session: summary.session,
    agent: summary.agent,
    firstEventTime: new Date(summary.firstEventMs).toISOString(),
    lastEventTime: new Date(summary.lastEventMs).toISOString(),
    ...(summary.lastPosition === undefined ? {} : { lastPosition: { session: summary.session, epoch: summary.lastPosition.epoch, seq: summary.lastPosition.seq } }),
    eventCount: summary.eventCount,
    claimed,
    ended: summary.ended,
  };
}
