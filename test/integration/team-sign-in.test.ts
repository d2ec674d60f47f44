/**
 * Team sign-in against the shared stack's embedded dev provider (`local/dev-identity-provider.ts`),
 * through the real handlers behind the local gateway: the console's code flow finished over HTTP
 * (the provider's own pages walked without a browser), the grant and lifetime the local rule set
 * gives, a person outside the mapped group refused naming the rule set, single-use finishes,
 * the identity-provider admin routes, and sign-out reaching open sockets and streams.
 */
import { describe, expect, inject, it } from 'vitest';
import { admin, tenantWithAdmin } from '../support/admin-client.ts';
import { consoleStyleSignIn, walkProvider } from '../support/dev-provider-login.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

const baseUrl = () => inject('baseUrl');

interface SignedIn {
  token: string;
  tokenId: string;
  expiresAt: string;
  scopes: string[];
  maxCapture: string;
  person: { subject: string; name: string; provider: string };
}

async function signedIn(login: string): Promise<SignedIn> {
  const response = await consoleStyleSignIn(baseUrl(), login);
  expect(response.status).toBe(200);
  return (await response.json()) as SignedIn;
}

describe('team sign-in (OpenID Connect) on the local stack', () => {
  it("issues the mapped group's grant, carrying the person, for at most the ID token's lifetime", async () => {
    const before = Date.now();
    const credential = await signedIn('demo');
    expect(credential.scopes).toEqual(['consume', 'control']);
    expect(credential.maxCapture).toBe('full');
    expect(credential.person).toEqual({ subject: 'demo', name: 'Dana Demo', provider: 'Local dev provider' });
    // The dev provider's ID tokens live an hour, less than the tenant's 8 h: the credential ends with the ID token.
    const expiresAtMs = Date.parse(credential.expiresAt);
    expect(expiresAtMs).toBeGreaterThan(before);
    expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + 3600_000);
    const own = await fetch(`${baseUrl()}/token`, { headers: { authorization: `Bearer ${credential.token}` } });
    expect(await own.json()).toMatchObject({ tenant: 'local', tokenId: credential.tokenId, scopes: ['consume', 'control'], person: credential.person });
    // Listed for the tenant's admins with the person, never the secret.
    const listed = (await (await admin('GET', '/tokens')).json()) as { tokens: Array<Record<string, unknown>> };
    const entry = listed.tokens.find((token) => token.tokenId === credential.tokenId);
    expect(entry).toMatchObject({ person: credential.person, label: 'sign-in: Dana Demo', status: 'active' });
    expect(JSON.stringify(entry)).not.toContain(credential.token);
  });

  it('refuses a person no rule matches, naming the tenant\'s rule set', async () => {
    const response = await consoleStyleSignIn(baseUrl(), 'visitor');
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: string; detail: string };
    expect(body.error).toBe('no-matching-rule');
    expect(body.detail).toMatch(/Victor Visitor signed in, but no rule of this tenant's rule set "local demo rules" matches/);
  });

  it('redeems a sign-in once: the same code and state again is refused', async () => {
    const redirectUri = `${baseUrl()}/console/`;
    const started = (await (await fetch(`${baseUrl()}/signin/start`, { method: 'POST', body: JSON.stringify({ tenant: 'local', redirectUri }) })).json()) as { authorizationUrl: string };
    const walk = await walkProvider(started.authorizationUrl, 'demo', redirectUri);
    const params = walk.callback?.searchParams;
    const body = JSON.stringify({ tenant: 'local', code: params?.get('code'), state: params?.get('state'), iss: params?.get('iss') });
    expect((await fetch(`${baseUrl()}/signin/finish`, { method: 'POST', body })).status).toBe(200);
    const again = await fetch(`${baseUrl()}/signin/finish`, { method: 'POST', body });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('unknown-sign-in');
  });

  it('refuses to send the code to a redirect URI the tenant did not register', async () => {
    const response = await fetch(`${baseUrl()}/signin/start`, { method: 'POST', body: JSON.stringify({ tenant: 'local', redirectUri: 'https://evil.example/console/' }) });
    expect(response.status).toBe(400);
  });

  it('answers a tenant without a provider like an unknown tenant', async () => {
    const { tenant } = await tenantWithAdmin('noidp');
    for (const name of [tenant, 'no-such-tenant-at-all']) {
      const response = await fetch(`${baseUrl()}/signin/provider?tenant=${name}`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBe('no-identity-provider');
    }
  });

  it('sets, shows (never the secret) and removes a tenant\'s provider over the admin API, tenant-wide admins only', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('idp');
    const document = {
      issuer: (await (await fetch(`${baseUrl()}/signin/provider?tenant=local`)).json() as { issuer: string }).issuer,
      clientId: 'aep-relay-local',
      clientSecret: 'a-secret-that-is-sealed',
      displayName: 'Acme SSO',
      redirectUris: [`${baseUrl()}/console/`],
      ruleSet: { name: 'acme rules', rules: [{ claim: 'groups', equals: 'agent-ops', scopes: ['consume'] }] },
    };
    const put = await admin('PUT', '/identity-provider', { token: adminToken, body: document });
    expect(put.status).toBe(200);
    const shown = await (await admin('GET', '/identity-provider', { token: adminToken })).json();
    expect(shown).toMatchObject({ tenant, displayName: 'Acme SSO', hasClientSecret: true, maxCredentialSeconds: 8 * 3600, ruleSet: { name: 'acme rules' } });
    expect(JSON.stringify(shown)).not.toContain('a-secret-that-is-sealed');
    expect(await (await fetch(`${baseUrl()}/signin/provider?tenant=${tenant}`)).json()).toMatchObject({ displayName: 'Acme SSO' });
    // A bound or expiring admin token may read the settings but not change them.
    const narrow = (await (await admin('POST', '/tokens', { token: adminToken, body: { scopes: ['admin'], expiresInSeconds: 600 } })).json()) as { token: string };
    expect((await admin('GET', '/identity-provider', { token: narrow.token })).status).toBe(200);
    expect((await admin('PUT', '/identity-provider', { token: narrow.token, body: document })).status).toBe(403);
    expect((await admin('PUT', '/identity-provider', { token: adminToken, body: { ...document, issuer: 'https://169.254.169.254' } })).status).toBe(400);
    expect((await admin('DELETE', '/identity-provider', { token: adminToken })).status).toBe(204);
    expect((await fetch(`${baseUrl()}/signin/provider?tenant=${tenant}`)).status).toBe(404);
  });

  it('signs out: the credential is revoked and its open socket and stream end', async () => {
    const credential = await signedIn('demo');
    const socket = await helloSocket({}, { token: credential.token });
    socket.send({ type: 'subscribe', id: 'all', filter: {} });
    await socket.next(isType('subscribed'));
    const stream = await openStream({}, { token: credential.token });
    expect(stream.status).toBe(200);
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text.includes('aep stream open')));

    const signOut = await fetch(`${baseUrl()}/signin/signout`, { method: 'POST', headers: { authorization: `Bearer ${credential.token}` } });
    expect(signOut.status).toBe(200);
    expect(await signOut.json()).toMatchObject({ signedOut: true, connectionsClosed: 1, streamsEnded: 1 });

    expect((await socket.next(isType('closing'), 30_000)).reason).toBe('token-revoked');
    await socket.closed;
    await stream.ended;
    expect(stream.comments().at(-1)).toBe('closing: token-revoked');
    expect((await fetch(`${baseUrl()}/token`, { headers: { authorization: `Bearer ${credential.token}` } })).status).toBe(401);
  });

  it('refuses sign-out for a token no sign-in issued', async () => {
    const response = await fetch(`${baseUrl()}/signin/signout`, { method: 'POST', headers: { authorization: `Bearer ${inject('devToken')}` } });
    expect(response.status).toBe(400);
  });
});
