/**
 * The history surface (`GET /sessions`, `GET /history`): read as the relay documents it, and
 * reported as not available when the relay does not serve it (404), never faked.
 */
import type { AepObject } from './attention.ts';
import type { RelayClient, RelayProblem } from './relay-client.ts';

export interface SessionSummary {
  session: string;
  agent?: string;
  firstTime?: string;
  lastTime?: string;
  lastPosition?: string;
  count?: number;
  claimed?: boolean;
  ended?: boolean;
}

export type Loaded<T> = { kind: 'ok'; value: T; next?: string } | { kind: 'unavailable' } | { kind: 'problem'; problem: RelayProblem };

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** One summary, read by the names the history issue gives its fields (agent, first and last time, last position, count, claimed, ended). */
export function summaryOf(item: AepObject): SessionSummary {
  const position = item.lastPosition ?? item.last_position;
  const positionText =
    typeof position === 'object' && position !== null ? `${String((position as AepObject).epoch ?? 0)}:${String((position as AepObject).seq ?? '')}` : text(position);
  const firstTime = text(item.firstTime ?? item.firstEventTime ?? item.first_time);
  const lastTime = text(item.lastTime ?? item.lastEventTime ?? item.last_time);
  const count = item.count ?? item.eventCount ?? item.events;
  const claimed = item.claimed ?? item.live;
  return {
    session: String(item.session ?? item.id ?? ''),
    ...(text(item.agent) === undefined ? {} : { agent: text(item.agent) as string }),
    ...(firstTime === undefined ? {} : { firstTime }),
    ...(lastTime === undefined ? {} : { lastTime }),
    ...(positionText === undefined ? {} : { lastPosition: positionText }),
    ...(typeof count === 'number' ? { count } : {}),
    ...(typeof claimed === 'boolean' ? { claimed } : {}),
    ...(typeof item.ended === 'boolean' ? { ended: item.ended } : {}),
  };
}

/** The `rel="next"` target of a `Link` header, if any. */
export function nextLinkOf(header: string | null): string | undefined {
  if (header === null) return undefined;
  const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(header);
  return match?.[1];
}

export async function loadSessions(client: RelayClient, path = '/sessions'): Promise<Loaded<SessionSummary[]>> {
  const result = await client.json<AepObject>('GET', path);
  if (!result.ok) return result.problem.status === 404 ? { kind: 'unavailable' } : { kind: 'problem', problem: result.problem };
  const body = result.value ?? {};
  const items = Array.isArray(body.sessions) ? body.sessions : Array.isArray(body.items) ? body.items : [];
  const cursor = text(body.cursor ?? body.next);
  const next = nextLinkOf(result.response.headers.get('link')) ?? (cursor === undefined ? undefined : `/sessions?cursor=${encodeURIComponent(cursor)}`);
  return { kind: 'ok', value: (items as AepObject[]).map(summaryOf), ...(next === undefined ? {} : { next }) };
}

export interface HistoryLine {
  /** The line exactly as the relay sent it (history is byte-identical to what was admitted). */
  raw: string;
  event: AepObject;
  /** The relay found the command's sender verified by this operator's identity card (AEP-0003 §8.3). */
  senderVerified?: { operator: string };
  /** The signed-in person whose credential sent the command (team sign-in). */
  sentBy?: { name: string; provider: string };
}

/**
 * One page of `GET /history`, asked for in the relay's JSON page format (each event's text
 * with the relay's findings beside it, such as `senderVerified`); a relay that answers NDJSON
 * instead is read line by line, with no findings.
 */
export async function loadHistory(client: RelayClient, path: string): Promise<Loaded<HistoryLine[]>> {
  const result = await client.negotiated(path, 'application/json, application/x-ndjson;q=0.5');
  if (!result.ok) return result.problem.status === 404 ? { kind: 'unavailable' } : { kind: 'problem', problem: result.problem };
  const link = nextLinkOf(result.response.headers.get('link'));
  if (result.value.contentType === 'application/json') {
    const body = JSON.parse(result.value.text) as { items?: unknown };
    const items = Array.isArray(body.items) ? (body.items as AepObject[]) : [];
    const events = items.filter((item) => typeof item.raw === 'string').map((item) => lineOf(item.raw as string, item.senderVerified, item.sentBy));
    return { kind: 'ok', value: events, ...(link === undefined ? {} : { next: link }) };
  }
  const lines = result.value.text.split('\n').filter((line) => line.trim() !== '').map((raw) => ({ raw, value: JSON.parse(raw) as AepObject }));
  // A final cursor line (no `type`) is the next page, not an event.
  const events = lines.filter((line) => typeof line.value.type === 'string').map((line) => ({ raw: line.raw, event: line.value }));
  const cursorLine = lines.map((line) => line.value).find((line) => typeof line.type !== 'string' && typeof line.cursor === 'string');
  const next = link ?? (cursorLine === undefined ? undefined : `${path.split('&cursor=')[0]}&cursor=${encodeURIComponent(String(cursorLine.cursor))}`);
  return { kind: 'ok', value: events, ...(next === undefined ? {} : { next }) };
}

function lineOf(raw: string, senderVerified: unknown, sentBy: unknown): HistoryLine {
  const operator = typeof senderVerified === 'object' && senderVerified !== null ? text((senderVerified as AepObject).operator) : undefined;
  const person = typeof sentBy === 'object' && sentBy !== null ? (sentBy as AepObject) : undefined;
  const name = text(person?.name);
  const provider = text(person?.provider);
  return {
    raw,
    event: JSON.parse(raw) as AepObject,
    ...(operator === undefined ? {} : { senderVerified: { operator } }),
    ...(name === undefined || provider === undefined ? {} : { sentBy: { name, provider } }),
  };
}
