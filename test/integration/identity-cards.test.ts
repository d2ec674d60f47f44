import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign } from 'jose';
import { describe, expect, it } from 'vitest';
import { STANDING_RECHECK_MS } from '../../src/relay/identity/standing-check.ts';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { testOperator } from '../support/identity-cards.ts';
import type { TestOperator } from '../support/identity-cards.ts';
import { mintId, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

/**
 * Identity cards (AEP-0003 §8.3) against the real hello, roster and routing: operators
 * registered over the admin API, cards signed in the test, claims verified or not.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long the lapsing cards are valid (ms). */
const CARD_LIFE_MS = 8_000;
const ACCEPTS = ['control.cancel'];

async function register(adminToken: string, operator: TestOperator): Promise<void> {
  const response = await admin('PUT', `/operators/${operator.name}`, { token: adminToken, body: { jwks: operator.jwks } });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function setPolicy(adminToken: string, policy: Record<string, unknown>): Promise<void> {
  const response = await admin('PUT', '/policy', { token: adminToken, body: { default: 'allow', rules: [], ...policy } });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** An emitter that says hello (with `card` if given) and claims `session`. */
/**
 * A connection that claims `session` with its first event (an emitter of its own: two claimants
 * of one name are two emitters, AEP-0001 §5.2). Fan-out records the claim before it delivers the
 * event, so once a watcher of the session gets the event the claim is there (unless the relay
 * closed the connection, its card refused).
 */
async function claimant(token: string, agent: string, session: string, card?: unknown): Promise<TestSocket> {
  const socket = await helloSocket({ role: 'both', identity: { agent, ...(card === undefined ? {} : { card }) }, capabilities: { control: { accepts: ACCEPTS } } }, { token });
  // The same identity (and card): a token bound to an operator takes no hello without it.
  const watcher = await helloSocket({ role: 'consumer', identity: { agent, ...(card === undefined ? {} : { card }) } }, { token });
  watcher.send({ type: 'subscribe', id: 'watch', filter: { session } });
  await watcher.next(isType('subscribed'));
  const event = sessionEvent(session, 0, { agent, source: `aep://h/agent/${agent}/session/${session}/${mintId()}` });
  socket.send(event);
  await Promise.race([watcher.next((frame) => frame.id === event.id), socket.closed]);
  await watcher.close();
  return socket;
}

function command(session: string): Record<string, unknown> {
  return { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://h/agent/phone', agent: 'phone', session, data: { scope: 'session' } };
}

/** The refusal code the sender gets, or `delivered` when none comes within the pause. */
async function answerTo(sender: TestSocket, session: string): Promise<string> {
  const sent = command(session);
  sender.send(sent);
  return Promise.race([sender.next((frame) => frame.cause === sent.id, 4000).then((frame) => String(frame.code)), pause(1500).then(() => 'delivered')]);
}

async function roster(socket: TestSocket): Promise<Frame[]> {
  const id = `r-${mintId()}`;
  socket.send({ type: 'roster', id });
  return (await socket.next((frame) => frame.type === 'roster' && frame.id === id)).entries as Frame[];
}

describe('identity cards at the hello', () => {
  it('lists a verified claim with its operator in the roster, and answers a failing card in-band while the connection continues', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card');
    const acme = await testOperator('acme', 'EdDSA', tenant);
    await register(adminToken, acme);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume', 'control'] });
    const session = uniqueName('verified');
    const verified = await claimant(emitter.token, 'worker', session, await acme.card('worker', ACCEPTS));
    expect(verified.all((frame) => frame.type === 'error')).toEqual([]);
    const wrongAgent = await claimant(emitter.token, 'worker', uniqueName('spoof'), await acme.card('someone-else', ACCEPTS));
    const refusal = await wrongAgent.next((frame) => frame.type === 'error');
    expect(refusal).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('identity card not verified (AEP-0003 §8.3)') });
    expect(refusal.detail).toContain('continues unverified');
    const entries = await roster(wrongAgent);
    expect(entries.find((entry) => entry.session === session)).toMatchObject({ agent: 'worker', verified: { operator: 'acme', valid_until: expect.any(String) } });
    expect(entries.filter((entry) => entry.verified === undefined).length).toBe(1);
    await Promise.all([verified.close(), wrongAgent.close()]);
  });

  it('refuses in-band (unauthorized) a card without an audience, for another tenant, of another type, or valid longer than the tenant takes', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card-bounds');
    const acme = await testOperator('acme', 'ES256', tenant);
    await register(adminToken, acme);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const claims = { agent: 'worker', operator: 'acme', accepts: ACCEPTS, valid_until: new Date(Date.now() + 3_600_000).toISOString(), aud: tenant };
    const typedJwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader({ alg: acme.alg, kid: acme.kid, typ: 'JWT' }).sign(acme.privateKey);
    const refused: Array<[unknown, string]> = [
      [await acme.card('worker', ACCEPTS, { overrides: { aud: undefined } }), `it has no "aud" (a string or an array of strings) naming this tenant "${tenant}"`],
      [await acme.card('worker', ACCEPTS, { overrides: { aud: 'victim' } }), `its "aud" "victim" does not name this tenant "${tenant}"`],
      [typedJwt, 'its protected header\'s "typ" is "JWT", not "aep-card+jws"'],
      [await acme.card('worker', ACCEPTS, { overrides: { valid_until: '9999-12-31T23:59:59Z' } }), 'its "valid_until" 9999-12-31T23:59:59Z is further off than this tenant takes: cards valid for at most 86400 s'],
    ];
    for (const [card, reason] of refused) {
      const session = uniqueName('bounds');
      const socket = await claimant(emitter.token, 'worker', session, card);
      expect(await socket.next((frame) => frame.type === 'error')).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining(`identity card not verified (AEP-0003 §8.3): ${reason}`) });
      expect((await roster(socket)).find((entry) => entry.session === session)).not.toHaveProperty('verified');
      await socket.close();
    }
    // The tenant may take less than a day: a card good for an hour is then too long.
    await setPolicy(adminToken, { cardMaxLifetimeSeconds: 600 });
    const tooLong = await claimant(emitter.token, 'worker', uniqueName('bounds'), await acme.card('worker', ACCEPTS));
    expect(await tooLong.next((frame) => frame.type === 'error')).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('cards valid for at most 600 s') });
    await tooLong.close();
  });

  it('refuses (closes) a hello with a failing card when the policy says cardFailure: close', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card-close');
    const acme = await testOperator('acme', 'ES256', tenant);
    await register(adminToken, acme);
    await setPolicy(adminToken, { cardFailure: 'close' });
    const emitter = await issue(adminToken, { scopes: ['emit'] });
    const socket = await openSocket({ token: emitter.token });
    socket.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'worker', card: await acme.card('worker', []) }, capabilities: { control: { accepts: ACCEPTS } } });
    expect(await socket.next((frame) => frame.type === 'error')).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('does not cover') });
    await socket.closed;
    expect(socket.all((frame) => frame.type === 'hello')).toEqual([]);
  });

  it('closes a verified connection at its card’s valid_until under cardFailure: close, and drops the verified member without it', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card-expiry');
    const acme = await testOperator('acme', 'ES256', tenant);
    await register(adminToken, acme);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const session = uniqueName('lapsing');
    // Valid long enough for the claim to be made on a loaded machine (a hello, a subscribe and an
    // event through fan-out), then waited out to its actual end.
    const lapsesAt = Date.now() + CARD_LIFE_MS;
    const lapsing = await claimant(emitter.token, 'worker', session, await acme.card('worker', ACCEPTS, { validForMs: CARD_LIFE_MS }));
    expect((await roster(lapsing)).find((entry) => entry.session === session)?.verified).toMatchObject({ operator: 'acme' });
    await pause(Math.max(0, lapsesAt - Date.now()) + 500);
    expect((await roster(lapsing)).find((entry) => entry.session === session)).not.toHaveProperty('verified');
    await lapsing.close();
    await setPolicy(adminToken, { cardFailure: 'close' });
    const closing = await claimant(emitter.token, 'worker', uniqueName('closing'), await acme.card('worker', ACCEPTS, { validForMs: CARD_LIFE_MS }));
    expect(await closing.next((frame) => frame.type === 'closing', CARD_LIFE_MS + 10_000)).toMatchObject({ reason: 'card-expired' });
    await closing.closed;
  }, 90_000);

  it('verifies against a JWKS fetched from a URL (a local receiver: the local stack allows loopback)', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card-url');
    const remote = await testOperator('remote', 'ES256', tenant);
    let fetches = 0;
    const server = createServer((_request, response) => {
      fetches += 1;
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }).end(JSON.stringify(remote.jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
      const put = await admin('PUT', '/operators/remote', { token: adminToken, body: { jwksUrl: url } });
      expect(put.status, await put.clone().text()).toBe(200);
      const listed = (await (await admin('GET', '/operators', { token: adminToken })).json()) as { operators: Array<Record<string, unknown>> };
      expect(listed.operators).toEqual([expect.objectContaining({ name: 'remote', jwksUrl: url })]);
      const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
      const sessions = [uniqueName('url-a'), uniqueName('url-b')];
      const first = await claimant(emitter.token, 'worker', sessions[0] as string, await remote.card('worker', ACCEPTS, { detached: true }));
      const second = await claimant(emitter.token, 'worker', sessions[1] as string, await remote.card('worker', ACCEPTS));
      const entries = await roster(first);
      expect(entries.filter((entry) => entry.verified?.operator === 'remote').map((entry) => entry.session).sort()).toEqual([...sessions].sort());
      // Cached by its max-age: the second hello did not fetch again (one process serves the local stack).
      expect(fetches).toBe(1);
      await Promise.all([first.close(), second.close()]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('a repeated hello', () => {
  it('is refused before its card is verified: no key set is fetched for it', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('card-again');
    const acme = await testOperator('acme', 'ES256', tenant);
    const remote = await testOperator('remote', 'EdDSA', tenant);
    await register(adminToken, acme);
    let fetches = 0;
    const server = createServer((_request, response) => {
      fetches += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(remote.jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const put = await admin('PUT', '/operators/remote', { token: adminToken, body: { jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json` } });
      expect(put.status, await put.clone().text()).toBe(200);
      const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
      const socket = await helloSocket({ role: 'both', identity: { agent: 'worker', card: await acme.card('worker', []) } }, { token: emitter.token });
      socket.send({ type: 'hello', versions: ['0.1'], role: 'both', identity: { agent: 'worker', card: await remote.card('worker', []) }, capabilities: {} });
      expect(await socket.next((frame) => frame.type === 'error')).toMatchObject({ code: 'invalid-frame', detail: 'hello was already exchanged on this connection' });
      expect(fetches).toBe(0);
      await socket.close();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('trusted operators over the admin API', () => {
  it('lets only a tenant-wide admin change them, refuses private keys and bad URLs, and removes them', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('ops-admin');
    const acme = await testOperator('acme', 'ES256', tenant);
    const bound = await issue(adminToken, { scopes: ['admin'], agents: ['worker'] });
    const expiring = await issue(adminToken, { scopes: ['admin'], expiresInSeconds: 3600 });
    for (const token of [bound.token, expiring.token]) {
      const refused = await admin('PUT', '/operators/acme', { token, body: { jwks: acme.jwks } });
      expect(refused.status).toBe(403);
    }
    const withPrivate = await admin('PUT', '/operators/acme', { token: adminToken, body: { jwks: { keys: [{ ...acme.jwks.keys[0], d: 'AAAA' }] } } });
    expect(withPrivate.status).toBe(400);
    expect(((await withPrivate.json()) as { detail: string }).detail).toContain('private member "d"');
    for (const jwksUrl of ['http://169.254.169.254/latest/meta-data', 'https://[::a9fe:a9fe]/jwks.json', 'https://[::ffff:0:a9fe:a9fe]/jwks.json']) {
      const metadata = await admin('PUT', '/operators/acme', { token: adminToken, body: { jwksUrl } });
      expect(metadata.status, jwksUrl).toBe(400);
      expect(((await metadata.json()) as { detail: string }).detail).toContain('link-local');
    }
    await register(adminToken, acme);
    expect(((await (await admin('GET', '/operators', { token: bound.token })).json()) as { operators: unknown[] }).operators).toHaveLength(1);
    expect((await admin('DELETE', '/operators/acme', { token: bound.token })).status).toBe(403);
    expect((await admin('DELETE', '/operators/acme', { token: adminToken })).status).toBe(204);
    expect((await admin('DELETE', '/operators/acme', { token: adminToken })).status).toBe(404);
    expect(((await (await admin('GET', '/operators', { token: adminToken })).json()) as { operators: unknown[] }).operators).toEqual([]);
  });
});

describe('control policy: verified claimants and verified senders', () => {
  it('routes to the verified claimant beside a spoofed claim instead of answering ambiguous, and refuses when only spoofers claim', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('vclaim');
    const acme = await testOperator('acme', 'EdDSA', tenant);
    await register(adminToken, acme);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const sender = await issue(adminToken, { scopes: ['control', 'consume'] });
    const session = uniqueName('contested');
    const real = await claimant(emitter.token, 'worker', session, await acme.card('worker', ACCEPTS));
    const spoof = await claimant(emitter.token, 'worker', session);
    const senderSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    // Without the rule both claims count: AEP-0004 §4.5's refusal.
    expect(await answerTo(senderSocket, session)).toBe('ambiguous');
    await setPolicy(adminToken, { verifiedClaimants: ['*'] });
    const sent = command(session);
    senderSocket.send(sent);
    const delivered = await real.next((frame) => frame.id === sent.id, 5000);
    expect(delivered.type).toBe('control.cancel');
    await pause(500);
    expect(spoof.all((frame) => frame.id === sent.id)).toEqual([]);
    expect(senderSocket.all((frame) => frame.cause === sent.id)).toEqual([]);
    await real.close();
    await pause(300);
    expect(await answerTo(senderSocket, session)).toBe('no-route');
    // A pattern leaves other sessions to every claimant.
    await setPolicy(adminToken, { verifiedClaimants: ['prod-*'] });
    expect(await answerTo(senderSocket, session)).toBe('delivered');
    await Promise.all([spoof.close(), senderSocket.close()]);
  });

  it('stops counting a connected claimant as verified within 5 s of its operator’s removal', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('vgone');
    const acme = await testOperator('acme', 'EdDSA', tenant);
    await register(adminToken, acme);
    await setPolicy(adminToken, { verifiedClaimants: ['*'] });
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const sender = await issue(adminToken, { scopes: ['control', 'consume'] });
    const session = uniqueName('orphaned');
    const agent = await claimant(emitter.token, 'worker', session, await acme.card('worker', ACCEPTS));
    const senderSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    expect(await answerTo(senderSocket, session)).toBe('delivered');
    expect((await admin('DELETE', '/operators/acme', { token: adminToken })).status).toBe(204);
    // docs/security-and-isolation.md "Identity cards": each process looks at an operator's keys again after STANDING_RECHECK_MS.
    await pause(STANDING_RECHECK_MS + 500);
    expect(await answerTo(senderSocket, session)).toBe('no-route');
    expect((await roster(senderSocket)).find((entry) => entry.session === session)).not.toHaveProperty('verified');
    await Promise.all([agent.close(), senderSocket.close()]);
  });

  it('takes commands from verified senders only when the policy says so', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('vsend');
    const acme = await testOperator('acme', 'ES256', tenant);
    await register(adminToken, acme);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const sender = await issue(adminToken, { scopes: ['control', 'consume'] });
    const session = uniqueName('guarded');
    const target = await claimant(emitter.token, 'worker', session);
    await setPolicy(adminToken, { verifiedSenders: ['*'] });
    const unverified = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    expect(await answerTo(unverified, session)).toBe('unauthorized');
    // Decided before claims are read: an unknown session gets the same answer.
    expect(await answerTo(unverified, uniqueName('unknown'))).toBe('unauthorized');
    const verified = await helloSocket({ role: 'both', identity: { agent: 'phone', card: await acme.card('phone', []) } }, { token: sender.token });
    expect(await answerTo(verified, session)).toBe('delivered');
    await Promise.all([target.close(), unverified.close(), verified.close()]);
  });
});

describe('tokens bound to an operator', () => {
  it('refuses a card of another trusted operator on an operator-bound token, and issues within the binding only', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('op-bound');
    const acme = await testOperator('acme', 'ES256', tenant);
    const beta = await testOperator('beta', 'EdDSA', tenant);
    await register(adminToken, acme);
    await register(adminToken, beta);
    const bound = await issue(adminToken, { scopes: ['emit', 'consume', 'admin'], operator: 'acme' });
    expect(bound.operator).toBe('acme');
    const refused = await openSocket({ token: bound.token });
    refused.send({ type: 'hello', versions: ['0.1'], role: 'both', identity: { agent: 'worker', card: await beta.card('worker', ACCEPTS) }, capabilities: { control: { accepts: ACCEPTS } } });
    expect(await refused.next((frame) => frame.type === 'error')).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('bound to operator "acme"') });
    await refused.closed;
    const session = uniqueName('acme-only');
    const accepted = await claimant(bound.token, 'worker', session, await acme.card('worker', ACCEPTS));
    expect((await roster(accepted)).find((entry) => entry.session === session)?.verified).toMatchObject({ operator: 'acme' });
    await accepted.close();
    // Attenuated like agents: what it issues inherits the binding, and another operator is refused.
    expect((await issue(bound.token, { scopes: ['emit'] })).operator).toBe('acme');
    expect((await admin('POST', '/tokens', { token: bound.token, body: { scopes: ['emit'], operator: 'beta' } })).status).toBe(403);
    // Bound to an operator, it is not tenant-wide: it may not change the trusted keys.
    expect((await admin('DELETE', '/operators/beta', { token: bound.token })).status).toBe(403);
  });

  it('refuses and closes a hello without a card on an operator-bound token: bound means verified', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('op-nocard');
    await register(adminToken, await testOperator('acme', 'ES256', tenant));
    const bound = await issue(adminToken, { scopes: ['emit', 'consume'], operator: 'acme' });
    const socket = await openSocket({ token: bound.token });
    socket.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'worker' }, capabilities: {} });
    expect(await socket.next((frame) => frame.type === 'error')).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('this token is bound to operator "acme", so its hello must carry that operator\'s card') });
    await socket.closed;
    expect(socket.all((frame) => frame.type === 'hello')).toEqual([]);
  });
});
