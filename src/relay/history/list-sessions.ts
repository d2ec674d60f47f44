/**
 * `GET /sessions` as a use case: the tenant's sessions, newest activity first, from the
 * summaries fan-out maintains (never a scan of the log), each marked claimed when a live
 * control claim (AEP-0004 §4.5) holds it now. Filters: `agent`, `prefix` (of the session id),
 * `since` / `until` (sessions with activity in that window).
 */
import type { Principal } from '../../auth/principal.ts';
import type { JsonObject } from '../../protocol/event.ts';
import type { SessionFilter, SessionSummary } from '../domain/history.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import { pagedRequest } from './paged-request.ts';
import { instantOf } from './query-params.ts';
import type { QueryParams } from './query-params.ts';

const SESSION_QUERY_PARAMS = ['agent', 'prefix', 'since', 'until'] as const;

export interface SessionsPageResult {
  sessions: JsonObject[];
  next?: string;
}

export async function listSessions(runtime: Pick<RelayPorts, 'sessionSummaries' | 'claims' | 'cursorKeys'>, principal: Principal, params: QueryParams): Promise<SessionsPageResult> {
  const request = await pagedRequest(runtime.cursorKeys, principal, params, { kind: 'sessions', queryParams: SESSION_QUERY_PARAMS, parse: sessionFilterOf });
  const [page, claims] = await Promise.all([runtime.sessionSummaries.listSummaries(principal.tenant, request.query, request.limit, request.storeCursor), runtime.claims.allClaims(principal.tenant)]);
  const claimed = new Set(claims.map((claim) => claim.session));
  const sessions = page.items.map((summary) => sessionView(summary, claimed.has(summary.session)));
  const next = request.nextCursor(page.cursor);
  return next === undefined ? { sessions } : { sessions, next };
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
