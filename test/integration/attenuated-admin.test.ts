import { describe, expect, inject, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
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
