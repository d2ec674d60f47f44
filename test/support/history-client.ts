/** HTTP clients for `GET /history` and `GET /sessions`, following `Link: rel="next"` like a consumer would. */
import { inject } from 'vitest';

export interface HistoryResponse {
  status: number;
  lines: string[];
  /** The next page's cursor from the `Link` header, when there is one. */
  next?: string;
  body: string;
}

export async function getPage(path: '/history' | '/sessions', token: string, params: Record<string, string>): Promise<HistoryResponse> {
  const url = `${inject('baseUrl')}${path}?${new URLSearchParams(params).toString()}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.text();
  const link = response.headers.get('link') ?? undefined;
  const next = link === undefined ? undefined : (new URL(/^<([^>]*)>; rel="next"$/.exec(link)?.[1] ?? '', 'http://relay').searchParams.get('cursor') ?? undefined);
  return { status: response.status, lines: body.split('\n').filter((line) => line !== ''), body, ...(next === undefined ? {} : { next }) };
}

/** Every line of a history query, page after page; also counts the pages. */
export async function wholeHistory(token: string, params: Record<string, string>, limit: number): Promise<{ lines: string[]; pages: number }> {
  const lines: string[] = [];
  let pages = 0;
  let page = await getPage('/history', token, { ...params, limit: String(limit) });
  for (;;) {
    if (page.status !== 200) throw new Error(`history answered ${page.status}: ${page.body}`);
    pages += 1;
    lines.push(...page.lines);
    if (page.next === undefined) return { lines, pages };
    page = await getPage('/history', token, { cursor: page.next, limit: String(limit) });
  }
}

export interface SessionView {
  session: string;
  agent: string;
  firstEventTime: string;
  lastEventTime: string;
  lastPosition?: { session: string; epoch: number; seq: number };
  eventCount: number;
  claimed: boolean;
  ended: boolean;
}

/** Every session a listing returns, following its pages. */
export async function allSessions(token: string, params: Record<string, string> = {}): Promise<SessionView[]> {
  const sessions: SessionView[] = [];
  let page = await getPage('/sessions', token, params);
  for (;;) {
    if (page.status !== 200) throw new Error(`sessions answered ${page.status}: ${page.body}`);
    sessions.push(...(JSON.parse(page.body) as { sessions: SessionView[] }).sessions);
    if (page.next === undefined) return sessions;
    page = await getPage('/sessions', token, { cursor: page.next, ...(params.limit === undefined ? {} : { limit: params.limit }) });
  }
}
