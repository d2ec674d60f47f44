import { describe, expect, it } from 'vitest';
import { mintId, ndjson, postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

/**
 * Inside one tenant, a token bound to agent `alpha` cannot act as agent `beta`: not at hello,
 * not by using beta's `source`, and not by taking the commands of beta's session. Sessions are
 * emitter-scoped (AEP-0001 §5.2): alpha's events under beta's session name are alpha's own
 * session, stored and delivered; commands to the name go to beta's claimant only. Each check
 * fails if the attack succeeds.
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

describe('bound tokens: emitter-scoped sessions and command routing', () => {
  it("stores alpha's events under beta's session name as alpha's own session; commands to the name reach beta only, online or offline", async () => {
    const { tenant, alpha, beta, commander } = await boundPair('owner');
    const session = uniqueName('beta-session');
    const betaSocket = await emitterOf(beta, 'beta', session);

    // HTTP and WebSocket: alpha's sequenced events under the same name, at the same positions, are stored.
    const overHttp = await postEvents(ndjson([eventOf('alpha', session, 0), eventOf('alpha', session, 1)]), { token: alpha, contentType: 'application/x-ndjson' });
    expect(overHttp.status).toBe(202);
    const alphaSocket = await emitterOf(alpha, 'alpha', session, 2);

    // Both claim the name: the roster shows both claims, and a command is refused `ambiguous` (AEP-0004 §4.5).
    const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: commander });
    phone.send({ type: 'roster', id: 'r' });
    const roster = await phone.next((frame) => frame.type === 'roster');
    expect((roster.entries as Array<{ session: string; agent: string }>).filter((entry) => entry.session === session).map((entry) => entry.agent).sort()).toEqual(['alpha', 'beta']);
    const first = cancelFor(session);
    phone.send(first);
    expect(await phone.next((frame) => frame.cause === first.id)).toMatchObject({ type: 'error', code: 'ambiguous' });

    // With beta offline, alpha is the only claimant of beta's name: the command has no route, alpha never gets it.
    await betaSocket.close();
    await pause(300);
    const second = cancelFor(session);
    phone.send(second);
    expect(await phone.next((frame) => frame.cause === second.id)).toMatchObject({ type: 'error', code: 'no-route' });

    // Beta back alone on its name (alpha gone): the command reaches beta.
    await alphaSocket.close();
    const betaBack = await emitterOf(beta, 'beta', session, 1);
    await pause(300);
    const third = cancelFor(session);
    phone.send(third);
    await betaBack.next((frame) => frame.id === third.id);
    expect(alphaSocket.all((frame) => frame.type === 'control.cancel')).toEqual([]);

    const stored = await storedEvents(tenant, session);
    expect(stored.filter((event) => event.seq !== undefined).map((event) => `${event.agent}:${event.seq}`).sort()).toEqual(['alpha:0', 'alpha:1', 'alpha:2', 'beta:0', 'beta:1']);
    await Promise.all([betaBack.close(), phone.close()]);
  });

  it("settles the name's owner with its first sequenced event, from whichever token", async () => {
    const { tenant, alpha, commander } = await boundPair('unbound');
    const unbound = await tenantWithToken(tenant, ['emit']);
    const session = uniqueName('shared');
    expect((await postEvents(JSON.stringify(eventOf('builder', session, 0)), { token: unbound })).status).toBe(202);
    expect((await postEvents(JSON.stringify(eventOf('other', session, 0)), { token: unbound })).status).toBe(202);
    expect((await postEvents(JSON.stringify(eventOf('alpha', session, 0)), { token: alpha })).status).toBe(202);
    expect((await storedEvents(tenant, session)).map((event) => event.agent).sort()).toEqual(['alpha', 'builder', 'other']);
    // The name is builder's: a sole claimant of alpha gets no command for it.
    const alphaSocket = await emitterOf(alpha, 'alpha', session, 1);
    const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: commander });
    const command = cancelFor(session);
    phone.send(command);
    expect(await phone.next((frame) => frame.cause === command.id)).toMatchObject({ code: 'no-route' });
    await Promise.all([alphaSocket.close(), phone.close()]);
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
