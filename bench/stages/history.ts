/** History reads: RRU per 1,000 events through `GET /history` at two page sizes, per `GET /sessions` page, and fan-out's session-summary WRU per event. */
import type { RunningStack } from '../../local/stack.ts';
import { createTenant, mintId, settle, uniqueName } from '../clients.ts';

export interface HistoryBench {
  sessionEvents: number;
  pages: Array<{ pageSize: number; requests: number; readUnitsPer1000: number; readUnitsPerRequest: number }>;
  sessionsListed: number;
  sessionsPage: { pageSize: number; readUnitsPerPage: number };
  summaryWriteUnitsPerEvent: number;
  summarySessionsPerBatch: string;
}

export async function measureHistory(stack: RunningStack, sessionEvents: number, listedSessions: number): Promise<HistoryBench> {
  const tenant = uniqueName('bench-history');
  const token = await createTenant(stack.dynamoEndpoint, tenant);
  const session = uniqueName('history');
  const post = async (lines: string[]) => {
    const response = await fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' }, body: `${lines.join('\n')}\n` });
    if (response.status !== 202) throw new Error(`POST /events answered ${response.status}`);
  };
  const event = (sessionName: string, seq: number) => JSON.stringify({ aep: '0.1', id: mintId(), type: 'progress.status', time: new Date().toISOString(), source: `aep://bench/agent/a/session/${sessionName}`, agent: 'a', session: sessionName, seq, data: { phase: 'working' } });

  await settle(stack);
  stack.resetUsage();
  for (let start = 0; start < sessionEvents; start += 100) {
    await post(Array.from({ length: Math.min(100, sessionEvents - start) }, (_, index) => event(session, start + index)));
  }
  await settle(stack);
  const summaryWriteUnitsPerEvent = stack.usage().functions.fanout.writeUnits / sessionEvents;
  const summarySessionsPerBatch = `${stack.usage().functions.fanout.invocations} fan-out batches for ${sessionEvents} events of one session`;

  const pages: HistoryBench['pages'] = [];
  for (const pageSize of [100, 1000]) {
    stack.resetUsage();
    let url = `${stack.baseUrl}/history?session=${encodeURIComponent(session)}&limit=${pageSize}`;
    let requests = 0;
    let lines = 0;
    for (;;) {
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      if (response.status !== 200) throw new Error(`GET /history answered ${response.status}`);
      lines += (await response.text()).split('\n').filter((line) => line !== '').length;
      requests += 1;
      const link = response.headers.get('link');
      if (link === null) break;
      url = `${stack.baseUrl}${/^<([^>]*)>/.exec(link)?.[1] ?? ''}`;
    }
    if (lines !== sessionEvents) throw new Error(`history returned ${lines} of ${sessionEvents} events`);
    const readUnits = stack.usage().functions.http.readUnits;
    pages.push({ pageSize, requests, readUnitsPer1000: (readUnits * 1000) / lines, readUnitsPerRequest: readUnits / requests });
  }

  for (let index = 0; index < listedSessions; index += 100) {
    await post(Array.from({ length: Math.min(100, listedSessions - index) }, (_, offset) => event(`${session}-${index + offset}`, 0)));
  }
  await settle(stack);
  const pageSize = 100;
  stack.resetUsage();
  const response = await fetch(`${stack.baseUrl}/sessions?limit=${pageSize}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`GET /sessions answered ${response.status}`);
  const listed = ((await response.json()) as { sessions: unknown[] }).sessions.length;
  if (listed !== Math.min(pageSize, listedSessions + 1)) throw new Error(`GET /sessions listed ${listed} sessions`);
  return {
    sessionEvents,
    pages,
    sessionsListed: listedSessions + 1,
    sessionsPage: { pageSize, readUnitsPerPage: stack.usage().functions.http.readUnits },
    summaryWriteUnitsPerEvent,
    summarySessionsPerBatch,
  };
}
