import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { eventually, expireSessionSummary } from '../support/history-fixtures.ts';
import { allSessions, getPage } from '../support/history-client.ts';
import type { SessionView } from '../support/history-client.ts';
import { ndjson, postEvents, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';

/** Two tenants, three agents: tenant A holds alpha (a1, ended), beta (a2) and gamma (a3, claimed by a live agent); tenant B holds a session named like A's beta. */
const tenantA = uniqueName('sess-a');
const tenantB = uniqueName('sess-b');
const run = uniqueName('ls');
const alpha = `${run}-alpha`;
const beta = `${run}-beta`;
const gamma = `${run}-gamma`;
let tokenA = '';
let tokenB = '';
let agent: SimulatedAgent | undefined;
const startedAt = Date.now();
let betaPostedAt = 0;

async function post(token: string, events: Array<Record<string, unknown>>): Promise<void> {
  const response = await postEvents(ndjson(events), { token, contentType: 'application/x-ndjson' });
  if (response.status !== 202) throw new Error(`POST /events answered ${response.status}`);
}

const source = (agentName: string, session: string) => `aep://test/agent/${agentName}/session/${session}`;

beforeAll(async () => {
  tokenA = await tenantWithToken(tenantA, ['emit', 'consume', 'control']);
  tokenB = await tenantWithToken(tenantB, ['emit', 'consume']);
  await post(tokenA, [
    sessionEvent(alpha, 0, { agent: 'a1', source: source('a1', alpha) }),
    sessionEvent(alpha, 1, { agent: 'a1', source: source('a1', alpha) }),
    sessionEvent(alpha, 2, { agent: 'a1', source: source('a1', alpha), type: 'session.ended', data: { reason: 'completed' } }),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  betaPostedAt = Date.now();
  await post(tokenA, [sessionEvent(beta, 0, { agent: 'a2', source: source('a2', beta), epoch: 3 }), sessionEvent(beta, 7, { agent: 'a2', source: source('a2', beta), epoch: 3 })]);
  await post(tokenB, [sessionEvent(beta, 0, { agent: 'a1', source: source('a1', beta) })]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: tokenA, agent: 'a3', session: gamma, accepts: ['control.pause'] });
  await agent.start();
  // Summaries are folded in by fan-out, after the events are stored.
  await eventually(() => allSessions(tokenA), (sessions) => sessions.length === 3);
  await eventually(() => allSessions(tokenB), (sessions) => sessions.length === 1);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
});

describe('GET /sessions', () => {
  it("lists the tenant's sessions, newest activity first, with their summaries and nothing of another tenant", async () => {
    const sessions = await allSessions(tokenA);
    expect(sessions.map((view) => view.session)).toEqual([gamma, beta, alpha]);
    const byName = new Map(sessions.map((view) => [view.session, view]));
    expect(byName.get(alpha)).toMatchObject({ agent: 'a1', eventCount: 3, ended: true, claimed: false, lastPosition: { session: alpha, epoch: 0, seq: 2 } });
    expect(byName.get(beta)).toMatchObject({ agent: 'a2', eventCount: 2, ended: false, claimed: false, lastPosition: { session: beta, epoch: 3, seq: 7 } });
    expect(byName.get(gamma)).toMatchObject({ agent: 'a3', ended: false, claimed: true });
    expect(byName.get(gamma)?.eventCount).toBeGreaterThanOrEqual(1);
    for (const view of sessions) {
      const first = Date.parse(view.firstEventTime);
      const last = Date.parse(view.lastEventTime);
      expect(first).toBeGreaterThanOrEqual(startedAt - 1000);
      expect(last).toBeGreaterThanOrEqual(first);
      expect(last).toBeLessThanOrEqual(Date.now());
    }
    const other = await allSessions(tokenB);
    expect(other).toEqual([expect.objectContaining({ session: beta, agent: 'a1', eventCount: 1, claimed: false })]);
  });

  it('filters by agent, session prefix and activity window', async () => {
    expect((await allSessions(tokenA, { agent: 'a2' })).map((view: SessionView) => view.session)).toEqual([beta]);
    expect((await allSessions(tokenA, { agent: 'nobody' })).map((view) => view.session)).toEqual([]);
    expect((await allSessions(tokenA, { prefix: `${run}-al` })).map((view) => view.session)).toEqual([alpha]);
    expect((await allSessions(tokenA, { since: String(betaPostedAt) })).map((view) => view.session)).toEqual([gamma, beta]);
    expect((await allSessions(tokenA, { until: new Date(betaPostedAt).toISOString() })).map((view) => view.session)).toEqual([alpha]);
    expect((await getPage('/sessions', tokenA, { since: 'soon' })).status).toBe(400);
  });

  it('pages with a signed cursor: every session once; altered or foreign cursors are refused', async () => {
    const paged = await allSessions(tokenA, { limit: '1' });
    expect(paged.map((view) => view.session)).toEqual([gamma, beta, alpha]);
    const first = await getPage('/sessions', tokenA, { limit: '1' });
    const cursor = first.next as string;
    expect(JSON.parse(first.body)).toMatchObject({ next: cursor });
    expect((await getPage('/sessions', tokenB, { cursor })).status).toBe(403);
    const altered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    const refused = await getPage('/sessions', tokenA, { cursor: altered });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid-cursor' });
    expect((await getPage('/history', tokenA, { cursor })).status).toBe(400);
    expect((await getPage('/sessions', tokenA, { limit: '5000' })).status).toBe(400);
  });

  it('is advertised in discovery under capabilities.experimental', async () => {
    const response = await fetch(`${inject('baseUrl')}/.well-known/aep`, { headers: { authorization: `Bearer ${tokenA}` } });
    const document = (await response.json()) as { capabilities: { experimental: Record<string, unknown> } };
    expect(document.capabilities.experimental.history).toEqual({ sessions: '/sessions', history: '/history', maxPage: 1000 });
  });

  it('requires the consume scope', async () => {
    const emitOnly = await tenantWithToken(tenantA, ['emit']);
    expect((await getPage('/sessions', emitOnly, {})).status).toBe(403);
  });

  it('never lists a session whose events have all expired', async () => {
    await expireSessionSummary(tenantA, alpha);
    expect((await allSessions(tokenA)).map((view) => view.session)).toEqual([gamma, beta]);
  });
});
