/**
 * The relay behind its edge, where browsers meet it: the stream handler reached through the
 * local CloudFront (which signs `/stream` like origin access control, so the handler's
 * Authorization is always a SigV4 signature), CORS for a dashboard on another origin (the
 * shared stack allows TEST_CORS_ORIGIN), and the socket behind `/socket/`.
 */
import { connect } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { TEST_CORS_ORIGIN } from '../support/global-setup.ts';
import { dynamoClient, sessionEvent, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket } from '../support/ws-client.ts';

/** A replay-only stream request (`live=0`), so a success ends by itself: the status says whether the token was accepted. */
async function streamStatus(headers: Record<string, string>, query: Record<string, string> = {}): Promise<number> {
  const params = new URLSearchParams({ live: '0', ...query });
  const response = await fetch(`${inject('baseUrl')}/stream?${params.toString()}`, { headers: { accept: 'text/event-stream', ...headers } });
  await response.text();
  return response.status;
}

describe('the stream behind the edge', () => {
  const token = () => inject('devToken');

  it('accepts the viewer token from the Authorization header (forwarded past the SigV4 signature)', async () => {
    expect(await streamStatus({ authorization: `Bearer ${token()}` })).toBe(200);
  });

  it('accepts the viewer token from ?access_token= while Authorization carries the SigV4 signature', async () => {
    expect(await streamStatus({}, { access_token: token() })).toBe(200);
  });

  it('takes the header before the query when a viewer sends both', async () => {
    expect(await streamStatus({ authorization: `Bearer ${token()}` }, { access_token: 'aep_not_a_token' })).toBe(200);
    expect(await streamStatus({ authorization: 'Bearer aep_not_a_token' }, { access_token: token() })).toBe(401);
  });

  it('refuses a viewer without a token', async () => {
    expect(await streamStatus({})).toBe(401);
  });

  it('does not let a viewer forge x-aep-authorization past the function that sets it', async () => {
    // Alone, the function drops it; next to a bad Authorization, the function overwrites it.
    expect(await streamStatus({ 'x-aep-authorization': `Bearer ${token()}` })).toBe(401);
    expect(await streamStatus({ 'x-aep-authorization': `Bearer ${token()}`, authorization: 'Bearer aep_not_a_token' })).toBe(401);
    expect(await streamStatus({ 'x-aep-authorization': `Bearer ${token()}`, authorization: 'Basic dXNlcjpwdw==' })).toBe(401);
  });
});

describe('CORS for a dashboard on another origin', () => {
  const base = () => inject('baseUrl');
  const preflight = (path: string, origin: string, method: string, requestHeaders: string) =>
    fetch(`${base()}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders } });

  it('answers the preflight of a POST /events from the allowed origin, without invoking the function', async () => {
    const response = await preflight('/events', TEST_CORS_ORIGIN, 'POST', 'authorization,content-type,aep-version');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
    expect(response.headers.get('access-control-allow-methods')?.split(',')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')?.split(',')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'aep-version']));
    expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  it('answers the preflight of a header-authenticated stream', async () => {
    const response = await preflight('/stream', TEST_CORS_ORIGIN, 'GET', 'authorization,last-event-id');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
    expect(response.headers.get('access-control-allow-methods')?.split(',')).toEqual(['GET', 'HEAD']);
  });

  it('grants nothing to an origin the deployment does not list', async () => {
    const refused = await preflight('/events', 'https://elsewhere.example', 'POST', 'authorization');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const read = await fetch(`${base()}/.well-known/aep`, { headers: { origin: 'https://elsewhere.example', authorization: `Bearer ${inject('devToken')}` } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('marks discovery, a POST (and its refusal) and a stream readable by the allowed origin, exposing Retry-After', async () => {
    const origin = { origin: TEST_CORS_ORIGIN };
    const discovery = await fetch(`${base()}/.well-known/aep`, { headers: { ...origin, authorization: `Bearer ${inject('devToken')}` } });
    expect(discovery.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
    const posted = await fetch(`${base()}/events`, {
      method: 'POST',
      headers: { ...origin, authorization: `Bearer ${inject('devToken')}`, 'content-type': 'application/json', 'aep-version': '0.1' },
      body: JSON.stringify(sessionEvent(uniqueName('cors'), 0)),
    });
    expect(posted.status).toBe(202);
    expect(posted.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
    expect(posted.headers.get('access-control-expose-headers')).toContain('retry-after');
    const refused = await fetch(`${base()}/events`, { method: 'POST', headers: { ...origin, 'content-type': 'application/json', 'aep-version': '0.1' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
    const stream = await fetch(`${base()}/stream?live=0&access_token=${encodeURIComponent(inject('devToken'))}`, { headers: origin });
    await stream.text();
    expect(stream.status).toBe(200);
    expect(stream.headers.get('access-control-allow-origin')).toBe(TEST_CORS_ORIGIN);
  });
});

describe('the socket behind the edge', () => {
  it('reaches the socket at /socket/ with a trailing slash', async () => {
    const socketUrl = `${inject('baseUrl').replace(/^http/, 'ws')}/socket/`;
    const socket = new WebSocket(`${socketUrl}?access_token=${encodeURIComponent(inject('devToken'))}`);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => reject(new Error(`refused ${response.statusCode}`)));
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} }));
    const reply = await new Promise<Record<string, unknown>>((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>)));
    expect(reply.type).toBe('hello');
    socket.close();
  });

  it('refuses handshakes the upgrade would refuse before $connect, so 200 of them take no slot', async () => {
    const tenant = uniqueName('handshake');
    const token = await tenantWithToken(tenant, ['consume']);
    const quotas = new QuotaStore(dynamoClient(), { tenantsTable: tableNames.tenants, connectionsTable: tableNames.connections, now: Date.now, cacheMs: 0 });
    expect(await quotas.setQuotas(tenant, { maxConnections: 2 })).toBe(true);
    const { port } = new URL(inject('baseUrl'));
    const malformed = [
      'Sec-WebSocket-Key: not-a-nonce',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: a,,b',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: aep, aep',
    ];
    const statuses: string[] = [];
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const raw = [`GET /socket?access_token=${encodeURIComponent(token)} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', malformed[attempt % malformed.length], '', ''].join('\r\n');
      statuses.push(await rawRequest(Number(port), raw));
    }
    expect(new Set(statuses)).toEqual(new Set(['HTTP/1.1 400 Bad Request']));
    // Both of the tenant's slots are still free.
    const first = await helloSocket({}, { token });
    const second = await helloSocket({}, { token });
    await first.close();
    await second.close();
  }, 60_000);
});

/** Sends one raw HTTP request and resolves with the status line of the answer. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n');
      if (end !== -1) {
        resolve(received.slice(0, end));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(received.split('\r\n')[0] ?? ''));
    socket.write(text);
  });
}
