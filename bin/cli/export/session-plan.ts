/**
 * Which sessions a tenant-wide export covers, chosen once when it starts (the checkpoint keeps
 * the list, so a resumed export covers the same sessions): the tenant's `GET /sessions` listing
 * narrowed to activity in the window (`since` / `until`: sessions whose first-to-last activity
 * overlaps it, a key range on the activity index) and to the globs' common literal `prefix`,
 * then matched against the globs here. Sorted by name, so the file's order does not depend on
 * when sessions were active.
 *
 * The listing is newest activity first; a session with new activity while it pages moves to the
 * front, behind the pages already read. A second listing of the activity since the first began
 * (a minute earlier, for fan-out's delay) catches those. What neither sees: sessions whose
 * summary fan-out has not folded yet (docs/history.md), so a window ending within seconds of
 * now may miss its newest sessions.
 */
import type { HistorySource } from './history-source.ts';
import { commonPrefix, compileSessionGlob } from './session-glob.ts';

/** How far before the first listing began the second one reaches back (fan-out's delay, generously). */
export const RELIST_MARGIN_MS = 60_000;

export interface SessionSelection {
  patterns?: readonly string[];
  since?: string;
  until?: string;
}

export async function planSessions(source: HistorySource, selection: SessionSelection, now: () => number = Date.now): Promise<string[]> {
  const globs = (selection.patterns ?? []).map(compileSessionGlob);
  const prefix = commonPrefix(globs);
  const base: Record<string, string> = {
    limit: '1000',
    ...(prefix === '' ? {} : { prefix }),
    ...(selection.until === undefined ? {} : { until: selection.until }),
  };
  const startedAt = now();
  const listed = new Set<string>();
  await listAll(source, selection.since === undefined ? base : { ...base, since: selection.since }, listed);
  const relistSince = startedAt - RELIST_MARGIN_MS;
  const since = selection.since === undefined ? relistSince : Math.max(relistSince, instantMs(selection.since));
  await listAll(source, { ...base, since: String(since) }, listed);
  const chosen = globs.length === 0 ? [...listed] : [...listed].filter((session) => globs.some((glob) => glob.matches(session)));
  // Code-unit order, the same on every machine (localeCompare is not).
  return chosen.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function listAll(source: HistorySource, params: Record<string, string>, into: Set<string>): Promise<void> {
  let page = await source.sessionsPage(params);
  for (;;) {
    for (const session of page.sessions) into.add(session);
    if (page.next === undefined) return;
    page = await source.sessionsPage({ cursor: page.next, limit: params.limit as string });
  }
}

/** `since` as the relay reads it (RFC 3339 or epoch ms); the first listing has already refused one it cannot read. */
function instantMs(text: string): number {
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : Date.parse(text);
}
