import { describe, expect, inject, it } from 'vitest';
import { hashTokenSecret } from '../../src/auth/token-secret.ts';
import { postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

/** Revocation closes a token's sockets before the DELETE returns; this is the bound docs/security-and-isolation.md documents. */

interface AdminCall {
  token?: string;
  body?: unknown;
}

async function admin(method: string, path: string, call: AdminCall = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${call.token ?? inject('devToken')}` };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${inject('baseUrl')}/admin${path}`, { method, headers, ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }) });
}

async function json<T = Record<string, any>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** A new tenant, created by the operator (the dev token's tenant), and an admin token of it. */
async function tenantWithAdmin(): Promise<{ tenant: string; adminToken: string }> {
  const tenant = uniqueName('adm');
  expect((await admin('POST', '/tenants', { body: { tenant } })).status).toBe(201);
  const issued = await admin('POST', '/tokens', { body: { tenant, scopes: ['emit', 'consume', 'control', 'admin'] } });
  expect(issued.status).toBe(201);
  return { tenant, adminToken: (await json(issued)).token as string };
}

async function issue(adminToken: string, grant: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await admin('POST', '/tokens', { token: adminToken, body: grant });
  expect(response.status).toBe(201);
  return json(response);
}

function post(token: string, overrides: Record<string, unknown> = {}): Promise<Response> {
  return postEvents(JSON.stringify(sessionEvent(uniqueName('s'), 0, overrides)), { token });
}

describe('tenants (operator)', () => {
  it('creates a tenant, lists it, and refuses a duplicate with 409 and a malformed id with 400', async () => {
    const tenant = uniqueName('new');
    const created = await admin('POST', '/tenants', { body: { tenant } });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ tenant, disabled: false, hasControlPolicy: false });
    const listed = await json<{ tenants: Array<{ tenant: string }> }>(await admin('GET', '/tenants'));
    expect(listed.tenants.map((entry) => entry.tenant)).toContain(tenant);
    const duplicate = await admin('POST', '/tenants', { body: { tenant } });
    expect(duplicate.status).toBe(409);
    expect(await json(duplicate)).toMatchObject({ error: 'tenant-exists' });
    for (const bad of ['Upper', 'has#hash', '', '-edge']) {
      expect((await admin('POST', '/tenants', { body: { tenant: bad } })).status).toBe(400);
    }
  });

  it('refuses its token everywhere while a tenant is disabled, closes its sockets, and accepts it again once enabled', async () => {
    const { tenant, adminToken } = await tenantWithAdmin();
    const { token } = await issue(adminToken, { scopes: ['emit', 'consume'] });
    expect((await post(token)).status).toBe(202);
    const socket = await helloSocket({}, { token });
    const disabled = await admin('POST', `/tenants/${tenant}/disable`);
    expect(disabled.status).toBe(200);
    expect(await json(disabled)).toMatchObject({ tenant, disabled: true, connectionsClosed: 1 });
    expect((await post(token)).status).toBe(401);
    // The tenant's own admin is told why (an unknown token would read "a valid bearer token is required").
    const ownAdmin = await admin('GET', '/tokens', { token: adminToken });
    expect([ownAdmin.status, await json(ownAdmin)]).toEqual([401, { error: 'unauthenticated', detail: `tenant ${tenant} is disabled: its tokens are refused until the operator enables it again` }]);
    const stream = await fetch(`${inject('baseUrl')}/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect([stream.status, ((await stream.json()) as { detail?: string }).detail]).toEqual([401, `tenant ${tenant} is disabled: its tokens are refused until the operator enables it again`]);
    await expect(helloSocket({}, { token })).rejects.toThrow('401');
    // The closing frame names why: the tenant, not the token, was turned off.
    expect(await socket.next(isType('closing'))).toMatchObject({ reason: 'tenant-disabled' });
    await socket.closed;
    expect((await admin('POST', `/tenants/${tenant}/enable`)).status).toBe(200);
    expect((await post(token)).status).toBe(202);
  });

  it('refuses to disable the operator tenant over its own API, and answers 404 for an unknown tenant', async () => {
    const self = await admin('POST', '/tenants/local/disable');
    expect(self.status).toBe(409);
    expect((await post(inject('devToken'))).status).toBe(202);
    expect((await admin('POST', `/tenants/${uniqueName('ghost')}/disable`)).status).toBe(404);
  });
});

describe('tokens (tenant self-service)', () => {
  it('shows a new secret once: the listing carries neither the secret nor its digest', async () => {
    const { tenant, adminToken } = await tenantWithAdmin();
    const issued = await issue(adminToken, { scopes: ['emit'], label: 'ci', expiresInSeconds: 3600 });
    expect(issued).toMatchObject({ tenant, scopes: ['emit'], label: 'ci', status: 'active' });
    expect(issued.tokenId).toMatch(/^tok_[0-9A-Z]{26}$/);
    expect(issued.token).toMatch(/^aep_/);
    expect(Date.parse(issued.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect((await post(issued.token)).status).toBe(202);
    const listing = await admin('GET', '/tokens', { token: adminToken });
    expect(listing.status).toBe(200);
    const text = await listing.text();
    expect(text).not.toContain(issued.token);
    expect(text).not.toContain(hashTokenSecret(issued.token));
    expect(text).not.toContain('digest');
    const tokens = (JSON.parse(text) as { tokens: Array<Record<string, unknown>> }).tokens;
    expect(tokens.find((token) => token.tokenId === issued.tokenId)).toMatchObject({ scopes: ['emit'], label: 'ci', status: 'active' });
    expect(tokens.every((token) => token.token === undefined)).toBe(true);
  });

  it('refuses a revoked token over HTTP at once and closes its open socket with a closing frame', async () => {
    const { adminToken } = await tenantWithAdmin();
    const { token, tokenId } = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const socket = await helloSocket({}, { token });
    const revoked = await admin('DELETE', `/tokens/${tokenId}`, { token: adminToken });
    expect(revoked.status).toBe(204);
    expect(revoked.headers.get('aep-connections-closed')).toBe('1');
    expect((await post(token)).status).toBe(401);
    expect(await socket.next(isType('closing'), 30_000)).toMatchObject({ type: 'closing', reason: 'token-revoked' });
    await socket.closed;
    const listed = await json<{ tokens: Array<Record<string, unknown>> }>(await admin('GET', '/tokens', { token: adminToken }));
    expect(listed.tokens.find((entry) => entry.tokenId === tokenId)).toMatchObject({ status: 'revoked' });
  });

  it("answers 404 when revoking or rotating an unknown token or another tenant's token", async () => {
    const first = await tenantWithAdmin();
    const second = await tenantWithAdmin();
    const { tokenId } = await issue(first.adminToken, { scopes: ['emit'] });
    expect((await admin('DELETE', '/tokens/tok_nope', { token: first.adminToken })).status).toBe(404);
    expect((await admin('DELETE', `/tokens/${tokenId}`, { token: second.adminToken })).status).toBe(404);
    expect((await admin('POST', `/tokens/${tokenId}/rotate`, { token: second.adminToken })).status).toBe(404);
  });

  it('rotates a token: the old secret is refused, the new one works with the same grant', async () => {
    const { adminToken } = await tenantWithAdmin();
    const old = await issue(adminToken, { scopes: ['emit', 'consume'], agents: ['tester'], label: 'rotating' });
    const response = await admin('POST', `/tokens/${old.tokenId}/rotate`, { token: adminToken });
    expect(response.status).toBe(201);
    const rotated = await json(response);
    expect(rotated).toMatchObject({ replaces: old.tokenId, scopes: ['emit', 'consume'], agents: ['tester'], label: 'rotating', status: 'active' });
    expect(rotated.tokenId).not.toBe(old.tokenId);
    expect(rotated.token).not.toBe(old.token);
    expect((await post(old.token)).status).toBe(401);
    expect((await post(rotated.token)).status).toBe(202);
    expect((await admin('POST', `/tokens/${old.tokenId}/rotate`, { token: adminToken })).status).toBe(409);
  });

  it('accepts a token until its expiry and refuses it after', async () => {
    const { adminToken } = await tenantWithAdmin();
    const issuedAt = Date.now();
    const { token } = await issue(adminToken, { scopes: ['emit'], expiresInSeconds: 1 });
    expect((await post(token)).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issuedAt + 1500 - Date.now())));
    expect((await post(token)).status).toBe(401);
  });

  it('refuses malformed grants with 400', async () => {
    const { adminToken } = await tenantWithAdmin();
    for (const body of [{}, { scopes: [] }, { scopes: ['root'] }, { scopes: ['emit'], agents: [] }, { scopes: ['emit'], expiresInSeconds: 0 }, { scopes: ['emit'], extra: 1 }]) {
      const response = await admin('POST', '/tokens', { token: adminToken, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('lets the operator manage another tenant by naming it', async () => {
    const { tenant } = await tenantWithAdmin();
    const issued = await json(await admin('POST', '/tokens', { body: { tenant, scopes: ['emit'] } }));
    expect(issued.tenant).toBe(tenant);
    const listed = await json<{ tokens: Array<{ tokenId: string }> }>(await admin('GET', `/tokens?tenant=${tenant}`));
    expect(listed.tokens.map((token) => token.tokenId)).toContain(issued.tokenId);
    expect((await admin('DELETE', `/tokens/${issued.tokenId}?tenant=${tenant}`)).status).toBe(204);
    expect((await post(issued.token)).status).toBe(401);
  });
});

describe('scopes and identity binding', () => {
  it('refuses a consume-only token on POST /events with 403', async () => {
    const { adminToken } = await tenantWithAdmin();
    const { token } = await issue(adminToken, { scopes: ['consume'] });
    const response = await post(token);
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ error: 'unauthorized' });
  });

  it('refuses an emit-only token a WebSocket subscription in-band and an SSE stream with 403', async () => {
    const { adminToken } = await tenantWithAdmin();
    const { token } = await issue(adminToken, { scopes: ['emit'] });
    const socket = await helloSocket({}, { token });
    socket.send({ type: 'subscribe', id: 'sub-1', filter: {} });
    expect(await socket.next((frame) => frame.id === 'sub-1')).toMatchObject({ type: 'error', code: 'unauthorized' });
    await socket.close();
    const stream = await openStream({ live: '0' }, { token });
    expect(stream.status).toBe(403);
    expect(stream.body).toMatchObject({ error: 'unauthorized' });
  });

  it('refuses /admin to a token without the admin scope, and operator routes to a tenant admin, with 403', async () => {
    const { adminToken } = await tenantWithAdmin();
    const { token } = await issue(adminToken, { scopes: ['emit', 'consume', 'control'] });
    for (const [method, path] of [['GET', '/tokens'], ['GET', '/policy'], ['POST', '/tokens']] as const) {
      const response = await admin(method, path, { token, ...(method === 'POST' ? { body: { scopes: ['admin'] } } : {}) });
      expect(response.status).toBe(403);
      expect(await json(response)).toMatchObject({ error: 'unauthorized' });
    }
    expect((await admin('GET', '/tenants', { token: adminToken })).status).toBe(403);
    expect((await admin('POST', '/tenants', { token: adminToken, body: { tenant: uniqueName('x') } })).status).toBe(403);
    expect((await admin('POST', '/tenants/local/disable', { token: adminToken })).status).toBe(403);
    expect((await admin('GET', '/tokens?tenant=local', { token: adminToken })).status).toBe(403);
    expect((await admin('POST', '/tokens', { token: adminToken, body: { tenant: 'local', scopes: ['admin'] } })).status).toBe(403);
    expect((await admin('GET', '/tokens', { token: 'aep_not_a_token' })).status).toBe(401);
  });

  it('refuses an event for another agent from a bound token: 403 over HTTP, in-band unauthorized with the event id on the socket', async () => {
    const { adminToken } = await tenantWithAdmin();
    const { token } = await issue(adminToken, { scopes: ['emit'], agents: ['a'] });
    const asA = { agent: 'a', source: 'aep://test/agent/a' };
    const asB = { agent: 'b', source: 'aep://test/agent/b' };
    expect((await post(token, asA)).status).toBe(202);
    const refused = await post(token, asB);
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ error: 'unauthorized' });
    const socket = await helloSocket({ role: 'emitter', identity: { agent: 'a' } }, { token });
    const event = sessionEvent(uniqueName('bound'), 0, asB);
    socket.send(event);
    expect(await socket.next((frame) => frame.cause === event.id)).toMatchObject({ type: 'error', code: 'unauthorized', cause: event.id });
    await socket.close();
  });
});

describe('control policy', () => {
  it('serves the default policy, refuses an invalid one with 400, and stores a valid one', async () => {
    const { tenant, adminToken } = await tenantWithAdmin();
    expect(await json(await admin('GET', '/policy', { token: adminToken }))).toEqual({ default: 'allow', rules: [] });
    const invalid = await admin('PUT', '/policy', { token: adminToken, body: { default: 'maybe' } });
    expect(invalid.status).toBe(400);
    expect(await json(invalid)).toMatchObject({ error: 'invalid-request' });
    const policy = { default: 'deny', rules: [{ effect: 'allow', types: ['control.pause'], sessions: ['prod-*'] }] };
    const stored = await admin('PUT', '/policy', { token: adminToken, body: policy });
    expect(stored.status).toBe(200);
    expect(await json(stored)).toEqual(policy);
    expect(await json(await admin('GET', '/policy', { token: adminToken }))).toEqual(policy);
    expect(await json(await admin('GET', `/policy?tenant=${tenant}`))).toEqual(policy);
  });
});
