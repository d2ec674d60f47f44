/**
 * Where a query-string token (`?access_token=`) is taken (issue 26, item 12): AEP-0003 §8.1
 * allows it for clients that cannot set headers, so the relay takes it on `GET /stream`
 * (`EventSource`) and the WebSocket handshake, and nowhere else: `/history`, `/sessions`,
 * `/token`, `POST /events` and the admin API answer 401 `unauthenticated` with the token in the query,
 * and accept the same token in the header.
 */
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';

describe('the access_token query fallback', () => {
  it('is refused with 401 everywhere but the stream and the socket', async () => {
    const tenant = uniqueName('qtok');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'admin']);
    const base = inject('baseUrl');
    const query = `access_token=${encodeURIComponent(token)}`;
    const session = uniqueName('qs');
    const event = JSON.stringify(sessionEvent(session, 0));
    const post = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { 'aep-version': '0.1', 'content-type': 'application/json', ...headers }, body: event });
    const refusedInQuery = [
      () => fetch(`${base}/history?session=${session}&${query}`),
      () => fetch(`${base}/sessions?${query}`),
      () => fetch(`${base}/token?${query}`),
      () => post(`${base}/events?${query}`),
      () => fetch(`${base}/admin/tokens?${query}`),
    ];
    for (const attempt of refusedInQuery) {
      const response = await attempt();
      expect(response.status, response.url).toBe(401);
      expect(((await response.json()) as { error?: string }).error, response.url).toBe('unauthenticated');
    }
    // The same token in the header is taken on each of them.
    const header = { authorization: `Bearer ${token}` };
    expect((await post(`${base}/events`, header)).status).toBe(202);
    expect((await fetch(`${base}/history?session=${session}`, { headers: header })).status).toBe(200);
    expect((await fetch(`${base}/sessions`, { headers: header })).status).toBe(200);
    expect((await fetch(`${base}/token`, { headers: header })).status).toBe(200);
    expect((await fetch(`${base}/admin/tokens`, { headers: header })).status).toBe(200);
    // And the two clients that cannot set a header take it from the query.
    const stream = await fetch(`${base}/stream?live=0&from=all&${query}`);
    expect(stream.status).toBe(200);
    await stream.text();
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/socket?${query}`);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake answered ${response.statusCode}`)));
      socket.once('error', reject);
    });
    socket.close();
  });
});
