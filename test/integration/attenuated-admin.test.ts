import { describe, expect, inject, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { mintId, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

/**
 * A token issues only tokens no stronger than itself (scopes, agents, expiry), the issuer is
 * recorded, and revoking a token revokes what it issued. Each check fails if a weaker admin
 * token could mint a stronger one, or one that outlives its revocation.
 */
async function refused(adminToken: string, grant: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await admin('POST', '/tokens', { token: adminToken, body: grant });
  expect(response.status).toBe(403);
  return (await response.json()) as Record<string, unknown>;
}

const alphaEvent = (session: string) => JSON.stringify(sessionEvent(session, 0, { agent: 'alpha', source: `aep://h/agent/alpha/session/${session}` }));

describe('attenuated issuance (admin routes)', () => {
  it('keeps a bound, expiring admin token from minting anything stronger', async () => {
    const { adminToken: root } = await tenantWithAdmin('att');
    const bound = await issue(root, { scopes: ['emit', 'admin'], agents: ['alpha'], expiresInSeconds: 600 });
    const expiresAt = Date.parse(bound.expiresAt as string);
    // Wider than the issuer: refused, whatever the member.
    expect(await refused(bound.token, { scopes: ['emit', 'consume'] })).toMatchObject({ error: 'unauthorized' });
    expect(await refused(bound.token, { scopes: ['emit'], agents: ['beta'] })).toMatchObject({ error: 'unauthorized' });
    expect(await refused(bound.token, { scopes: ['emit'], agents: ['alpha', 'beta'] })).toMatchObject({ error: 'unauthorized' });
    expect(await refused(bound.token, { scopes: ['admin'], expiresInSeconds: 3600 })).toMatchObject({ error: 'unauthorized' });
    // Left open: inherited, so the "unbound, never-expiring admin token" comes out bound and expiring.
    const child = await issue(bound.token, { scopes: ['admin', 'emit'] });
    expect(child.agents).toEqual(['alpha']);
    expect(Date.parse(child.expiresAt as string)).toBeLessThanOrEqual(expiresAt);
    expect(child.issuedBy).toMatch(new RegExp(`/${bound.tokenId}$`));
    // Within: fine.
    const narrow = await issue(bound.token, { scopes: ['emit'], agents: ['alpha'], expiresInSeconds: 60 });
    expect(narrow).toMatchObject({ scopes: ['emit'], agents: ['alpha'], status: 'active' });
    expect((await postEvents(alphaEvent(uniqueName('s')), { token: narrow.token })).status).toBe(202);
  });

  it('refuses to rotate a token wider than the caller (which would hand out its secret)', async () => {
    const { adminToken: root } = await tenantWithAdmin('att-rot');
    const wide = await issue(root, { scopes: ['emit'] });
    const bound = await issue(root, { scopes: ['emit', 'admin'], agents: ['alpha'] });
    const rotate = await admin('POST', `/tokens/${wide.tokenId}/rotate`, { token: bound.token });
    expect(rotate.status).toBe(403);
    expect((await postEvents(JSON.stringify(sessionEvent(uniqueName('s'), 0)), { token: wide.token })).status).toBe(202);
  });

  it('revokes, with a token, every token it issued and those they issued, closing their sockets', async () => {
    const { adminToken: root } = await tenantWithAdmin('att-cascade');
    const middle = await issue(root, { scopes: ['emit', 'consume', 'admin'] });
    const leaf = await issue(middle.token, { scopes: ['emit', 'consume'] });
    const grandchild = await issue(middle.token, { scopes: ['admin', 'consume'] });
    const deepest = await issue(grandchild.token, { scopes: ['consume'] });
    const socket = await helloSocket({}, { token: deepest.token });
    // Rotating the middle token keeps the chain: the replacement takes over what it issued.
    const rotatedResponse = await admin('POST', `/tokens/${middle.tokenId}/rotate`, { token: root });
    expect(rotatedResponse.status).toBe(201);
    const rotated = (await rotatedResponse.json()) as Record<string, string>;
    expect((await postEvents(JSON.stringify(sessionEvent(uniqueName('s'), 0)), { token: leaf.token })).status).toBe(202);

    const revoked = await admin('DELETE', `/tokens/${rotated.tokenId}`, { token: root });
    expect(revoked.status).toBe(204);
    expect((revoked.headers.get('aep-also-revoked') ?? '').split(',').sort()).toEqual([leaf, grandchild, deepest].map((token) => `${token.tenant}/${token.tokenId}`).sort());
    for (const token of [rotated.token, leaf.token, grandchild.token, deepest.token]) {
      expect((await postEvents(JSON.stringify(sessionEvent(uniqueName('s'), 0)), { token })).status).toBe(401);
    }
    expect(await socket.next(isType('closing'))).toMatchObject({ reason: 'token-revoked' });
    // The issuer that revoked is untouched.
    expect((await admin('GET', '/tokens', { token: root })).status).toBe(200);
  });

  it('holds for the operator issuing into another tenant, and records it as the issuer', async () => {
    const tenant = uniqueName('att-op');
    expect((await admin('POST', '/tenants', { body: { tenant } })).status).toBe(201);
    const issued = await issue(inject('devToken'), { tenant, scopes: ['admin', 'emit'] });
    expect(issued.issuedBy).toMatch(/^local\//);
  });
});

describe('attenuated issuance (CLI over HTTP)', () => {
  it('refuses a wider token and revokes in cascade, printing what it took along', { timeout: 60_000 }, async () => {
    const { adminToken: root } = await tenantWithAdmin('att-cli');
    const bound = await issue(root, { scopes: ['emit', 'admin'], agents: ['alpha'] });
    const env = { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: bound.token };
    const wider = await cli(['tokens', 'issue', '--scopes', 'emit', '--agents', 'beta'], env);
    expect(wider.code).toBe(1);
    expect(wider.stderr + wider.stdout).toContain('unauthorized');
    const child = await cli(['tokens', 'issue', '--scopes', 'emit', '--json'], env);
    expect(child.code).toBe(0);
    const childToken = JSON.parse(child.stdout) as Record<string, unknown>;
    expect(childToken.agents).toEqual(['alpha']);
    const revoke = await cli(['tokens', 'revoke', bound.tokenId as string], { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: root });
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain(`also revoked ${childToken.tenant as string}/${childToken.tokenId as string}`);
    expect((await postEvents(alphaEvent(uniqueName('s')), { token: childToken.token as string })).status).toBe(401);
  });
});

/** The 403 body every refusal below answers with (docs/security-and-isolation.md, "Admin routes"). */
async function refusal(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(403);
  expect(body).toMatchObject({ error: 'unauthorized', detail: expect.any(String) });
  return body;
}

describe('attenuated admin actions (admin routes)', () => {
  it('keeps a bound admin and a 10-minute admin from revoking or rotating the unbound root admin', async () => {
    const { tenant, adminToken: root } = await tenantWithAdmin('att-reach');
    const rootId = ((await (await admin('GET', '/tokens', { token: root })).json()) as { tokens: Array<{ tokenId: string }> }).tokens[0]?.tokenId as string;
    // Every scope the root holds, so what refuses them is the binding and the expiry.
    const bound = await issue(root, { scopes: ['emit', 'consume', 'control', 'admin'], agents: ['alpha'] });
    const shortLived = await issue(root, { scopes: ['emit', 'consume', 'control', 'admin'], expiresInSeconds: 600 });
    for (const caller of [bound, shortLived]) {
      expect((await refusal(await admin('DELETE', `/tokens/${rootId}`, { token: caller.token }))).detail).toMatch(/bound to|expires/);
      await refusal(await admin('POST', `/tokens/${rootId}/rotate`, { token: caller.token }));
    }
    // The root admin, and what it issued, are untouched.
    expect((await admin('GET', '/tokens', { token: root })).status).toBe(200);
    expect((await postEvents(alphaEvent(uniqueName('s')), { token: bound.token })).status).toBe(202);
    // What a caller could have issued it may still revoke: its own issue, and a sibling within its grant.
    const own = await issue(bound.token, { scopes: ['emit'] });
    const sibling = await issue(root, { scopes: ['emit'], agents: ['alpha'], expiresInSeconds: 300 });
    expect((await admin('DELETE', `/tokens/${own.tokenId}`, { token: bound.token })).status).toBe(204);
    expect((await admin('DELETE', `/tokens/${sibling.tokenId}`, { token: bound.token })).status).toBe(204);
    const shortSibling = await issue(root, { scopes: ['consume'], expiresInSeconds: 300 });
    expect((await admin('DELETE', `/tokens/${shortSibling.tokenId}?tenant=${tenant}`, { token: shortLived.token })).status).toBe(204);
  });

  it('lets only an admin bound to no agent, without expiry and reading at full set the control policy', async () => {
    const { adminToken: root } = await tenantWithAdmin('att-policy');
    const policy = { default: 'deny', rules: [] };
    for (const grant of [{ agents: ['alpha'] }, { expiresInSeconds: 600 }, { maxCapture: 'metadata' }]) {
      const weaker = await issue(root, { scopes: ['control', 'admin'], ...grant });
      expect((await refusal(await admin('PUT', '/policy', { token: weaker.token, body: policy }))).detail).toContain('setting the tenant\'s control policy needs an admin token bound to no agent');
      // Reading it stays open to every admin token.
      expect((await admin('GET', '/policy', { token: weaker.token })).status).toBe(200);
    }
    expect(await (await admin('GET', '/policy', { token: root })).json()).toEqual({ default: 'allow', rules: [] });
    expect((await admin('PUT', '/policy', { token: root, body: policy })).status).toBe(200);
  });

  it('bounds sinks by the token that sets them: consume, its ceiling, its agents, no expiry; the whole set', async () => {
    const { adminToken: root } = await tenantWithAdmin('att-sinks');
    const hook = (name: string, extra: Record<string, unknown> = {}) => ({ name, kind: 'cloudevents-webhook', url: 'http://127.0.0.1:9/hook', ...extra });
    const noConsume = await issue(root, { scopes: ['emit', 'admin'] });
    expect((await refusal(await admin('PUT', '/bridges', { token: noConsume.token, body: { sinks: [hook('all', { maxCapture: 'full' })] } }))).detail).toContain('consume');
    const capped = await issue(root, { scopes: ['consume', 'admin'], maxCapture: 'metadata' });
    expect((await refusal(await admin('PUT', '/bridges', { token: capped.token, body: { sinks: [hook('all', { maxCapture: 'full' })] } }))).detail).toContain('maxCapture full');
    const shortLived = await issue(root, { scopes: ['consume', 'admin'], expiresInSeconds: 600 });
    expect((await refusal(await admin('PUT', '/bridges', { token: shortLived.token, body: { sinks: [hook('mine')] } }))).detail).toContain('expires');
    const bound = await issue(root, { scopes: ['consume', 'admin'], agents: ['alpha'] });
    expect((await refusal(await admin('PUT', '/bridges', { token: bound.token, body: { sinks: [hook('theirs', { agents: ['beta'] })] } }))).detail).toContain('beta');
    // Left open, agents are the caller's binding and the ceiling at most the caller's.
    const cappedLow = await issue(root, { scopes: ['consume', 'admin'], maxCapture: 'none' });
    const low = await admin('PUT', '/bridges', { token: cappedLow.token, body: { sinks: [hook('mine')] } });
    expect(((await low.json()) as { sinks: unknown[] }).sinks).toEqual([expect.objectContaining({ maxCapture: 'none' })]);
    expect((await admin('DELETE', '/bridges', { token: root })).status).toBe(204);
    const set = await admin('PUT', '/bridges', { token: bound.token, body: { sinks: [hook('mine')] } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { sinks: unknown[] }).sinks).toEqual([expect.objectContaining({ name: 'mine', agents: ['alpha'], maxCapture: 'metadata' })]);
    // The root sets a full, every-agent sink; a narrower token can then neither replace nor clear the set.
    expect((await admin('PUT', '/bridges', { token: root, body: { sinks: [hook('all', { maxCapture: 'full' })] } })).status).toBe(200);
    expect((await refusal(await admin('PUT', '/bridges', { token: bound.token, body: { sinks: [] } }))).detail).toContain('"all"');
    await refusal(await admin('DELETE', '/bridges', { token: capped.token }));
    await refusal(await admin('POST', '/bridges/dead-letters/redrive', { token: bound.token }));
    expect((await admin('POST', '/bridges/dead-letters/redrive', { token: root })).status).toBe(202);
    expect(((await (await admin('GET', '/bridges', { token: root })).json()) as { sinks: Array<{ name: string }> }).sinks.map((sink) => sink.name)).toEqual(['all']);
  });

  it("leaves quotas to the operator's tenant-wide admin: a tenant's own admin reads its quotas and cannot set them", async () => {
    const { tenant, adminToken: root } = await tenantWithAdmin('att-quotas');
    expect((await refusal(await admin('PUT', '/quotas', { token: root, body: { maxConnections: 100_000 } }))).detail).toContain('operator');
    const boundOperator = await issue(inject('devToken'), { scopes: ['admin'], agents: ['ops'] });
    expect((await refusal(await admin('PUT', `/quotas?tenant=${tenant}`, { token: boundOperator.token, body: { maxConnections: 5 } }))).detail).toContain('setting tenant quotas');
    await refusal(await admin('POST', '/tenants', { token: boundOperator.token, body: { tenant: uniqueName('att-nope') } }));
    const set = await admin('PUT', `/quotas?tenant=${tenant}`, { body: { maxConnections: 5, retentionDays: 7 } });
    expect(set.status).toBe(200);
    expect(await (await admin('GET', '/quotas', { token: root })).json()).toEqual({ tenant, quotas: { maxConnections: 5, retentionDays: 7 } });
    expect((await admin('PUT', `/quotas?tenant=${tenant}`, { body: { maxConnections: 0 } })).status).toBe(400);
    expect((await admin('PUT', `/quotas?tenant=${tenant}`, { body: { bogus: 1 } })).status).toBe(400);
  });

  it('keeps a bound, expiring or capped admin of the operator tenant out of every other tenant (403), where it could grant itself a full read', async () => {
    const { tenant: victim } = await tenantWithAdmin('att-victim');
    // The issue's token: the operator tenant's, bound to agent `ci`, expiring in an hour.
    const narrow = await issue(inject('devToken'), { scopes: ['consume', 'admin'], agents: ['ci'], expiresInSeconds: 3600 });
    const capped = await issue(inject('devToken'), { scopes: ['consume', 'admin'], maxCapture: 'metadata' });
    for (const caller of [narrow, capped]) {
      expect((await refusal(await admin('GET', `/tokens?tenant=${victim}`, { token: caller.token }))).detail).toContain('acting on another tenant needs an admin token bound to no agent');
      await refusal(await admin('POST', '/tokens', { token: caller.token, body: { tenant: victim, scopes: ['consume', 'admin'], agents: ['ci'], maxCapture: 'full' } }));
      await refusal(await admin('GET', `/policy?tenant=${victim}`, { token: caller.token }));
      await refusal(await admin('GET', `/operators?tenant=${victim}`, { token: caller.token }));
      // Its own tenant it still administers, within its grant.
      expect((await admin('GET', '/tokens', { token: caller.token })).status).toBe(200);
    }
    // Nothing was issued in the victim tenant: its tokens are the one its admin was given.
    const listed = (await (await admin('GET', `/tokens?tenant=${victim}`)).json()) as { tokens: unknown[] };
    expect(listed.tokens).toHaveLength(1);
  });
});

describe('control policy through rotation', () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** What the relay answers a command from `sender` to `session`: an error code, or delivered. */
  async function answerTo(sender: Awaited<ReturnType<typeof helloSocket>>, session: string): Promise<string> {
    const command = { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://h/agent/phone', agent: 'phone', session, data: { scope: 'session' } };
    sender.send(command);
    return Promise.race([sender.next((candidate) => candidate.cause === command.id, 3000).then((found) => String(found.code)), pause(1500).then(() => 'delivered')]);
  }

  it('keeps a rotated token under the rules that named it, and stores a rule naming its new id under its lineage', async () => {
    const { adminToken: root } = await tenantWithAdmin('att-lineage');
    const sender = await issue(root, { scopes: ['control', 'consume'] });
    expect(sender.lineage).toBe(sender.tokenId);
    expect((await admin('PUT', '/policy', { token: root, body: { default: 'allow', rules: [{ effect: 'deny', tokens: [sender.tokenId] }] } })).status).toBe(200);
    const rotated = (await (await admin('POST', `/tokens/${sender.tokenId}/rotate`, { token: root })).json()) as Record<string, string>;
    expect(rotated.tokenId).not.toBe(sender.tokenId);
    expect(rotated.lineage).toBe(sender.tokenId);
    const socket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: rotated.token });
    expect(await answerTo(socket, uniqueName('target'))).toBe('unauthorized');
    // Rotated twice, still under the rule; a rule written with the current id is stored under the lineage.
    const again = (await (await admin('POST', `/tokens/${rotated.tokenId}/rotate`, { token: root })).json()) as Record<string, string>;
    const stored = await admin('PUT', '/policy', { token: root, body: { default: 'allow', rules: [{ effect: 'deny', tokens: [again.tokenId] }] } });
    expect(await stored.json()).toEqual({ default: 'allow', rules: [{ effect: 'deny', tokens: [sender.tokenId] }] });
    const latest = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: again.token });
    expect(await answerTo(latest, uniqueName('target'))).toBe('unauthorized');
    // Another token is not caught by it.
    const other = await issue(root, { scopes: ['control', 'consume'] });
    const otherSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: other.token });
    expect(await answerTo(otherSocket, uniqueName('target'))).toBe('no-route');
    await Promise.all([socket.close(), latest.close(), otherSocket.close()]);
  });
});
