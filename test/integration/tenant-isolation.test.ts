import { describe, expect, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { inject } from 'vitest';
import { mintId, ndjson, postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, untilClaimed } from '../support/ws-client.ts';
import { openStream } from '../support/sse-client.ts';

/**
 * Two tenants use the same session names and agent names. Tenant B's token never sees or
 * affects tenant A's data on any surface.
 */
describe('tenant isolation', () => {
  it('keeps every surface of tenant B blind to tenant A, with identical session and agent names', async () => {
    const tokenA = await tenantWithToken(uniqueName('iso-a'), ['emit', 'consume', 'control']);
    const tenantB = uniqueName('iso-b');
    const tokenB = await tenantWithToken(tenantB, ['emit', 'consume', 'control']);
    const session = uniqueName('shared');

    // B watches on every consuming surface before A does anything.
    const wsB = await helloSocket({}, { token: tokenB });
    wsB.send({ type: 'subscribe', id: 'b', filter: {} });
    await wsB.next(isType('subscribed'));
    const sseB = await openStream({}, { token: tokenB });

    // A: a claimant agent for the session, and events over HTTP.
    const agentA = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: tokenA, agent: 'tester', session, accepts: ['control.cancel'] });
    await agentA.start();
    const response = await postEvents(ndjson([sessionEvent(session, 100), sessionEvent(session, 101)]), { contentType: 'application/x-ndjson', token: tokenA });
    expect(response.status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 600));

    // Live delivery: nothing of A reached B's socket or stream.
    expect(wsB.all((frame) => typeof frame.type === 'string' && frame.type.includes('.'))).toEqual([]);
    expect(sseB.messages()).toEqual([]);

    // Replay: B's replay-all and positional replay of the same session name see nothing.
    const replay = await openStream({ from: 'all', live: '0' }, { token: tokenB });
    await replay.ended;
    expect(replay.messages()).toEqual([]);
    wsB.send({ type: 'subscribe', id: 'r', filter: { session }, from: [{ session, epoch: 0, seq: 0 }] });
    await wsB.next((frame) => frame.id === 'r');
    wsB.send({ type: 'subscribe', id: 'all', filter: {}, from: 'all' });
    await wsB.next((frame) => frame.id === 'all');
    expect(await storedEvents(tenantB, session)).toEqual([]);

    // Roster: B sees none of A's claims.
    wsB.send({ type: 'roster', id: 'roster' });
    expect((await wsB.next(isType('roster'))).entries).toEqual([]);

    // Commands: B cannot reach A's claimant.
    const cancel = { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://b/agent/tester', agent: 'tester', session, data: { scope: 'session' } };
    wsB.send(cancel);
    expect(await wsB.next((frame) => frame.cause === cancel.id)).toMatchObject({ type: 'error', code: 'no-route' });
    expect(agentA.receivedCommands).toEqual([]);

    // Claims: B's emitter claiming the same session name does not make A's routing ambiguous.
    const agentB = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: tokenB, agent: 'tester', session, accepts: ['control.cancel'] });
    await agentB.start();
    await untilClaimed({ token: tokenB }, session);
    const wsA = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: tokenA });
    wsA.send({ type: 'subscribe', id: 'a', filter: { session } });
    await wsA.next(isType('subscribed'));
    const cancelA = { ...cancel, id: mintId(), source: 'aep://a/agent/phone', agent: 'phone' };
    wsA.send(cancelA);
    await wsA.next((frame) => frame.cause === cancelA.id);
    expect(wsA.all((frame) => frame.type === 'error')).toEqual([]);
    expect(agentA.receivedCommands.map((text) => JSON.parse(text).id)).toEqual([cancelA.id]);
    expect(agentB.receivedCommands).toEqual([]);

    // B's history of the session name holds only B's own agent's events, none of A's.
    const sourcesB = (await storedEvents(tenantB, session)).map((event) => event.source);
    expect(sourcesB.length).toBeGreaterThan(0);
    expect(sourcesB.every((source) => String(source).startsWith('aep://simulator/'))).toBe(true);

    sseB.close();
    await wsA.close();
    await wsB.close();
    await agentA.stop();
    await agentB.stop();
  });
});
