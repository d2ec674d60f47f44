import { describe, expect, it } from 'vitest';
import { mintId, ndjson, postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

/**
 * Inside one tenant, a token bound to agent `alpha` cannot act as agent `beta`: not at hello,
 * not by writing into beta's session, not by using beta's `source`. Each check fails if the
 * attack succeeds.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function boundPair(prefix: string) {
  const tenant = uniqueName(prefix);
  const alpha = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['alpha'] });
  const beta = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['beta'] });
  const commander = await tenantWithToken(tenant, ['consume', 'control'], { agents: ['phone'] });
  return { tenant, alpha, beta, commander };
}

function eventOf(agent: string, session: string, seq: number, overrides: Record<string, unknown> = {}) {
  return sessionEvent(session, seq, { agent, source: `aep://h/agent/${agent}/session/${session}`, ...overrides });
}

function cancelFor(session: string, sender = 'phone') {
  return { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: `aep://h/agent/${sender}`, agent: sender, session, data: { scope: 'session' } };
}

async function emitterOf(token: string, agent: string, session: string, seq = 0): Promise<TestSocket> {
  const socket = await helloSocket({ role: 'both', identity: { agent }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token });
  const event = eventOf(agent, session, seq);
  socket.send(event);
  await pause(300);
  expect(socket.all((frame) => frame.cause === event.id)).toEqual([]);
  return socket;
}

describe('bound tokens: hello identity', () => {
  it('refuses a hello naming an agent the token is not bound to, and the roster never shows it', async () => {
    const { alpha, commander } = await boundPair('hello-id');
    for (const role of ['emitter', 'both', 'consumer']) {
      const impostor = await openSocket({ token: alpha });
      impostor.send({ type: 'hello', versions: ['0.1'], role, identity: { agent: 'beta' }, capabilities: { control: { accepts: ['control.cancel'] } } });
      expect(await impostor.next(isType('error'))).toMatchObject({ code: 'unauthorized' });
      expect(await impostor.next(isType('closing'))).toMatchObject({ reason: 'unauthorized' });
      await impostor.closed;
      expect(impostor.all(isType('hello'))).toEqual([]);
    }
    // An emitter of a bound token must name its agent at all (AEP-0003 §4 rule 3 makes it required).
    const anonymous = await openSocket({ token: alpha });
    anonymous.send({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} });
    await anonymous.next(isType('hello'));
    await anonymous.close();
    // Its own name works, and the roster shows alpha's claim under alpha only.
    const session = uniqueName('s');
    const own = await emitterOf(alpha, 'alpha', session);
    const watcher = await helloSocket({}, { token: commander });
    watcher.send({ type: 'roster', id: 'r' });
    const roster = await watcher.next(isType('roster'));
    expect(roster.entries).toEqual([{ session, agent: 'alpha', control: { accepts: ['control.cancel'] } }]);
    await own.close();
    await watcher.close();
  });
});

describe('bound tokens: session ownership', () => {
  it("keeps alpha out of beta's session on HTTP and WebSocket, online and offline; commands keep reaching beta", async () => {
    const { tenant, alpha, beta, commander } = await boundPair('owner');
    const session = uniqueName('beta-session');
    const betaSocket = await emitterOf(beta, 'beta', session);

    // HTTP: a sequenced event of alpha into beta's session is refused whole, nothing stored.
    const overHttp = await postEvents(ndjson([eventOf('alpha', uniqueName('alpha-own'), 0), eventOf('alpha', session, 1)]), { token: alpha, contentType: 'application/x-ndjson' });
    expect(overHttp.status).toBe(403);
    expect(await overHttp.json()).toMatchObject({ error: 'unauthorized' });
    // WebSocket: refused in-band, and alpha's connection never becomes a claimant.
    const alphaSocket = await helloSocket({ role: 'both', identity: { agent: 'alpha' }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token: alpha });
    const intrusion = eventOf('alpha', session, 2);
    alphaSocket.send(intrusion);
    expect(await alphaSocket.next((frame) => frame.cause === intrusion.id)).toMatchObject({ type: 'error', code: 'unauthorized' });

    // With beta online, a command is routed to beta alone (not `ambiguous`).
    const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: commander });
    const first = cancelFor(session);
    phone.send(first);
    await betaSocket.next((frame) => frame.id === first.id);
    await pause(300);
    expect(phone.all((frame) => frame.cause === first.id)).toEqual([]);

    // With beta offline, alpha still cannot take the session over; the command has no route.
    await betaSocket.close();
    await pause(300);
    const retry = eventOf('alpha', session, 3);
    alphaSocket.send(retry);
    expect(await alphaSocket.next((frame) => frame.cause === retry.id)).toMatchObject({ code: 'unauthorized' });
    const second = cancelFor(session);
    phone.send(second);
    expect(await phone.next((frame) => frame.cause === second.id)).toMatchObject({ type: 'error', code: 'no-route' });
    expect(alphaSocket.all((frame) => frame.type === 'control.cancel')).toEqual([]);

    // Foreign-emitter events are unaffected: alpha's own command into beta's session is stored seq-less.
    const betaBack = await emitterOf(beta, 'beta', session, 4);
    const alphaCommand = cancelFor(session, 'alpha');
    alphaSocket.send(alphaCommand);
    await betaBack.next((frame) => frame.id === alphaCommand.id);

    const stored = await storedEvents(tenant, session);
    expect(stored.filter((event) => event.seq !== undefined).map((event) => event.agent)).toEqual(['beta', 'beta']);
    await Promise.all([alphaSocket.close(), betaBack.close(), phone.close()]);
  });

  it('lets an unbound token write into any session, and its first event settles the owner', async () => {
    const { tenant, alpha } = await boundPair('unbound');
    const unbound = await tenantWithToken(tenant, ['emit']);
    const session = uniqueName('shared');
    expect((await postEvents(JSON.stringify(eventOf('builder', session, 0)), { token: unbound })).status).toBe(202);
    expect((await postEvents(JSON.stringify(eventOf('other', session, 1)), { token: unbound })).status).toBe(202);
    // The session is builder's: a bound alpha may not join it.
    expect((await postEvents(JSON.stringify(eventOf('alpha', session, 2)), { token: alpha })).status).toBe(403);
    expect((await storedEvents(tenant, session)).map((event) => event.agent)).toEqual(['builder', 'other']);
  });
});

describe('bound tokens: source binding (event-id squatting)', () => {
  it("refuses beta's source from alpha on HTTP and WebSocket, so beta's real event is stored, not dropped as a duplicate", async () => {
    const { tenant, alpha, beta } = await boundPair('squat');
    const session = uniqueName('beta-s');
    const alphaSession = uniqueName('alpha-s');
    const predictableId = mintId();
    const squat = eventOf('alpha', alphaSession, 0, { id: predictableId, source: `aep://h/agent/beta/session/${session}` });
    const overHttp = await postEvents(JSON.stringify(squat), { token: alpha });
    expect(overHttp.status).toBe(403);
    expect(await overHttp.json()).toMatchObject({ error: 'unauthorized' });
    const socket = await helloSocket({ role: 'emitter', identity: { agent: 'alpha' } }, { token: alpha });
    for (const source of [`aep://h/agent/beta/session/${session}`, 'aep://h/agent/beta', 'urn:x:beta', `aep://h/agent/alph/session/${session}`, 'aep://h/agents/alpha']) {
      const attempt = { ...squat, source };
      socket.send(attempt);
      expect(await socket.next((frame) => frame.cause === squat.id && frame.type === 'error' && String(frame.detail).includes(JSON.stringify(source)))).toMatchObject({ code: 'unauthorized' });
    }
    // Percent-encoded agent segments decode to the bound name.
    const encoded = eventOf('alpha', alphaSession, 1, { source: `aep://h/agent/%61lpha/session/${alphaSession}` });
    expect((await postEvents(JSON.stringify(encoded), { token: alpha })).status).toBe(202);
    // Beta's real event with that id and source is stored.
    const real = eventOf('beta', session, 0, { id: predictableId });
    const response = await postEvents(JSON.stringify(real), { token: beta });
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ stored: 1, duplicates: 0 });
    expect((await storedEvents(tenant, session)).map((event) => event.id)).toEqual([predictableId]);
    await socket.close();
  });
});
