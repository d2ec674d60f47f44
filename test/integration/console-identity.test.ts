/**
 * The console's way with an agent-bound token (issue 26, item 9) opens no door: its hello is
 * a consumer hello naming no agent (AEP-0003 §4 rule 3 requires `identity.agent` of emitters
 * only), which a bound token may say, but over that connection, as everywhere, every event and
 * command must carry one of the token's agents. So a token bound to `ops-phone` still cannot
 * emit as `console`, command as `console`, claim a session as `console`, or declare `console`
 * at hello: each is refused with `unauthorized` (AEP-0004 §4.1, the relay's binding), and
 * nothing is stored or claimed. `GET /token` tells the console which agents it may name.
 */
import { describe, expect, inject, it } from 'vitest';
import { mintId, postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket } from '../support/ws-client.ts';

const CONSOLE_HELLO = { type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: { filters: ['attr-match'] } };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function asConsole(session: string, seq: number) {
  return sessionEvent(session, seq, { agent: 'console', source: `aep://console/agent/console/session/${session}` });
}

function commandFrom(agent: string, session: string) {
  return { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: `aep://console/agent/${agent}`, agent, session, data: { scope: 'session' } };
}

describe("a bound token on the console's consumer hello", () => {
  it('reads its own grant from GET /token: the agents it may name, and no secret', async () => {
    const token = await tenantWithToken(uniqueName('grant'), ['consume', 'control'], { agents: ['ops-phone', 'ops-desk'] });
    const response = await fetch(`${inject('baseUrl')}/token`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const grant = (await response.json()) as Record<string, unknown>;
    expect(grant).toMatchObject({ scopes: ['consume', 'control'], agents: ['ops-desk', 'ops-phone'], maxCapture: 'full' });
    expect(JSON.stringify(grant)).not.toContain(token);
    const unbound = await tenantWithToken(uniqueName('grant-u'), ['consume']);
    const open = (await (await fetch(`${inject('baseUrl')}/token`, { headers: { authorization: `Bearer ${unbound}` } })).json()) as Record<string, unknown>;
    expect(open.agents).toBeUndefined();
    expect((await fetch(`${inject('baseUrl')}/token`)).status).toBe(401);
  });

  it('is accepted, but cannot emit, command or claim as console; its own agent commands', async () => {
    const tenant = uniqueName('con-id');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['ops-phone'] });
    const socket = await openSocket({ token });
    socket.send(CONSOLE_HELLO);
    await socket.next(isType('hello'));

    // A command as `console`: refused before routing, with the command's id as cause.
    const command = commandFrom('console', uniqueName('target'));
    socket.send(command);
    expect(await socket.next((frame) => frame.cause === command.id)).toMatchObject({ type: 'error', code: 'unauthorized' });

    // An event as `console`: refused, and nothing is stored.
    const session = uniqueName('as-console');
    const event = asConsole(session, 0);
    socket.send(event);
    expect(await socket.next((frame) => frame.cause === event.id)).toMatchObject({ type: 'error', code: 'unauthorized' });
    const overHttp = await postEvents(JSON.stringify(asConsole(session, 1)), { token });
    expect(overHttp.status).toBe(403);
    expect(await overHttp.json()).toMatchObject({ error: 'unauthorized' });

    // The token's own agent as sender is not refused for who it is (no claimant: no-route).
    const own = commandFrom('ops-phone', uniqueName('nobody'));
    socket.send(own);
    expect(await socket.next((frame) => frame.cause === own.id)).toMatchObject({ type: 'error', code: 'no-route' });
    await socket.close();

    // Claiming as `console`: a hello declaring it is refused for every role, and an emitter of
    // the token's own agent cannot claim a session with `console` events.
    for (const role of ['consumer', 'emitter', 'both']) {
      const impostor = await openSocket({ token });
      impostor.send({ ...CONSOLE_HELLO, role, identity: { agent: 'console' } });
      expect(await impostor.next(isType('error'))).toMatchObject({ code: 'unauthorized' });
      await impostor.closed;
      expect(impostor.all(isType('hello'))).toEqual([]);
    }
    const emitter = await helloSocket({ role: 'both', identity: { agent: 'ops-phone' }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token });
    const claim = asConsole(session, 2);
    emitter.send(claim);
    expect(await emitter.next((frame) => frame.cause === claim.id)).toMatchObject({ type: 'error', code: 'unauthorized' });
    await pause(300);
    const watcher = await helloSocket({}, { token });
    watcher.send({ type: 'roster', id: 'r' });
    expect((await watcher.next(isType('roster'))).entries).toEqual([]);
    expect(await storedEvents(tenant, session)).toEqual([]);
    await emitter.close();
    await watcher.close();
  });
});
