import { describe, expect, inject, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { connectionTableStores } from '../../src/store/connection-table.ts';
import { ControlPolicyStore } from '../../src/store/control-policy-store.ts';
import { dynamoClient, mintId, sessionEvent, storedEvents, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, waitForCount, untilClaimed } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

const ALL_COMMANDS = ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume'];

function command(type: string, session: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { aep: '0.1', id: mintId(), type, time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session, ...fields };
}

async function startAgent(token: string, session: string, accepts = ALL_COMMANDS, claims = 1, name = 'sim'): Promise<SimulatedAgent> {
  const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token, agent: name, session, accepts });
  await agent.start();
  // The first sequenced event records the claim; wait until the relay has it (`claims` in all).
  await untilClaimed({ token }, session, claims);
  return agent;
}

async function controller(token: string, session: string): Promise<TestSocket> {
  const client = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token });
  client.send({ type: 'subscribe', id: 'watch', filter: { session } });
  await client.next(isType('subscribed'));
  return client;
}

const byCause = (id: string) => (frame: Frame) => frame.cause === id;

describe('control plane', () => {
  it('completes the attention round trip and keeps all four events in the session replay', async () => {
    const tenant = uniqueName('ctl');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('attn');
    const agent = await startAgent(token, session);
    const phone = await controller(token, session);
    const requestId = agent.requestAttention();
    await phone.next((frame) => frame.id === requestId);
    const respond = command('control.attention.respond', session, { subject: requestId, cause: requestId, data: { answer: { option: 'allow' } } });
    phone.send(respond);
    const accepted = await phone.next((frame) => frame.type === 'control.accepted' && frame.cause === respond.id);
    const answered = await phone.next((frame) => frame.type === 'attention.answered');
    const resolved = await phone.next((frame) => frame.type === 'attention.resolved');
    expect(accepted.cause).toBe(respond.id);
    expect(answered).toMatchObject({ subject: requestId, cause: respond.id, data: { answer: { option: 'allow' }, via: 'control' } });
    expect(resolved).toMatchObject({ subject: requestId, cause: answered.id, data: { resolution: 'answered' } });
    expect(agent.receivedCommands).toEqual([JSON.stringify(respond)]);
    const history = await storedEvents(tenant, session);
    const ids = history.map((event) => event.id);
    for (const id of [respond.id, accepted.id, answered.id, resolved.id]) expect(ids).toContain(id);
    expect(ids.indexOf(respond.id as string)).toBeLessThan(ids.indexOf(accepted.id as string));
    expect(history.find((event) => event.id === respond.id)?.seq).toBeUndefined();
    await phone.close();
    await agent.stop();
  });

  it('refuses with no-route when no live connection claims the session, leaving its replay unchanged', async () => {
    const tenant = uniqueName('noroute');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('orphan');
    const agent = await startAgent(token, session);
    await agent.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await storedEvents(tenant, session);
    const phone = await controller(token, session);
    const cancel = command('control.cancel', session, { data: { scope: 'session' } });
    phone.send(cancel);
    expect(await phone.next(byCause(cancel.id as string))).toMatchObject({ type: 'error', code: 'no-route', cause: cancel.id });
    expect(await storedEvents(tenant, session)).toEqual(before);
    await phone.close();
  });

  it('refuses with ambiguous when two emitters claim the same session name, and nobody receives it', async () => {
    const tenant = uniqueName('amb');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('twin');
    // Two emitters (two sources) of one name: two sessions to AEP-0001 §5.2, one name to routing.
    const first = await startAgent(token, session);
    const second = await startAgent(token, session, ALL_COMMANDS, 2, 'sim-twin');
    const phone = await controller(token, session);
    const cancel = command('control.cancel', session, { data: { scope: 'run' } });
    phone.send(cancel);
    expect(await phone.next(byCause(cancel.id as string))).toMatchObject({ type: 'error', code: 'ambiguous' });
    expect(first.receivedCommands).toEqual([]);
    expect(second.receivedCommands).toEqual([]);
    const history = await storedEvents(tenant, session);
    expect(history.map((event) => event.id)).not.toContain(cancel.id);
    await phone.close();
    await first.stop();
    await second.stop();
  });

  it('refuses an undeclared command type with unsupported on the target behalf', async () => {
    const tenant = uniqueName('unsup');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('narrow');
    const agent = await startAgent(token, session, ['control.attention.respond']);
    const phone = await controller(token, session);
    const pause = command('control.pause', session, { data: {} });
    phone.send(pause);
    expect(await phone.next(byCause(pause.id as string))).toMatchObject({ type: 'error', code: 'unsupported' });
    expect(agent.receivedCommands).toEqual([]);
    await phone.close();
    await agent.stop();
  });

  it('refuses a command from a token without the control scope, and one the tenant ACL denies, with unauthorized', async () => {
    const tenant = uniqueName('acl');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const consumeOnly = await tenantWithToken(tenant, ['consume']);
    const session = uniqueName('guarded');
    const agent = await startAgent(token, session);
    const watcher = await controller(consumeOnly, session);
    const first = command('control.pause', session, { data: {} });
    watcher.send(first);
    expect(await watcher.next(byCause(first.id as string))).toMatchObject({ type: 'error', code: 'unauthorized' });
    const policies = new ControlPolicyStore(dynamoClient(), tableNames.tenants);
    await policies.setControlPolicy(tenant, JSON.stringify({ default: 'allow', rules: [{ effect: 'deny', types: ['control.cancel'] }] }));
    const phone = await controller(token, session);
    const cancel = command('control.cancel', session, { data: { scope: 'run' } });
    phone.send(cancel);
    expect(await phone.next(byCause(cancel.id as string))).toMatchObject({ type: 'error', code: 'unauthorized' });
    const pause = command('control.pause', session, { data: {} });
    phone.send(pause);
    expect(await phone.next((frame) => frame.type === 'control.accepted' && frame.cause === pause.id)).toBeDefined();
    expect(agent.receivedCommands.map((text) => JSON.parse(text).id)).toEqual([pause.id]);
    await phone.close();
    await watcher.close();
    await agent.stop();
  });

  it('never routes a command from another tenant to this tenant claimant', async () => {
    const tenantA = uniqueName('ta');
    const tenantB = uniqueName('tb');
    const tokenA = await tenantWithToken(tenantA, ['emit', 'consume', 'control']);
    const tokenB = await tenantWithToken(tenantB, ['emit', 'consume', 'control']);
    const session = uniqueName('same-name');
    const agentA = await startAgent(tokenA, session);
    const phoneB = await controller(tokenB, session);
    const cancel = command('control.cancel', session, { data: { scope: 'run' } });
    phoneB.send(cancel);
    expect(await phoneB.next(byCause(cancel.id as string))).toMatchObject({ type: 'error', code: 'no-route' });
    expect(agentA.receivedCommands).toEqual([]);
    await phoneB.close();
    await agentA.stop();
  });

  it('delivers a command retransmitted 3 times 3 times, stores it once, and the sender sees one ack decision', async () => {
    const tenant = uniqueName('retry');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('retx');
    const agent = await startAgent(token, session);
    const phone = await controller(token, session);
    const pause = command('control.pause', session, { data: {} });
    const text = JSON.stringify(pause);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      phone.sendRaw(text);
      await phone.next((frame) => frame.type === 'control.accepted' && frame.cause === pause.id);
    }
    const deadline = Date.now() + 5000;
    while (agent.receivedCommands.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(agent.receivedCommands).toEqual([text, text, text]);
    const acks = await waitForCount(phone, (frame) => frame.type === 'control.accepted' && frame.cause === pause.id, 3);
    expect(new Set(acks.map((frame) => frame.id)).size).toBe(1);
    const history = await storedEvents(tenant, session);
    expect(history.filter((event) => event.id === pause.id)).toHaveLength(1);
    expect(history.filter((event) => event.type === 'control.accepted')).toHaveLength(1);
    await phone.close();
    await agent.stop();
  });

  it('answers control.cancel of a run with control.accepted then exactly one run.cancelled cause-linked to it', async () => {
    const tenant = uniqueName('cancel');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('cxl');
    const agent = await startAgent(token, session);
    const phone = await controller(token, session);
    const cancel = command('control.cancel', session, { run: agent.run, data: { scope: 'run' } });
    phone.send(cancel);
    const accepted = await phone.next((frame) => frame.type === 'control.accepted' && frame.cause === cancel.id);
    const cancelled = await phone.next((frame) => frame.type === 'run.cancelled');
    expect(cancelled).toMatchObject({ cause: cancel.id, run: agent.run });
    // The agent decided in this order; live arrival may interleave (its frames can reach the
    // relay concurrently), so order is read from the session positions, as consumers must.
    expect(accepted.seq).toBeLessThan(cancelled.seq);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(phone.all((frame) => frame.type === 'run.cancelled')).toHaveLength(1);
    await phone.close();
    await agent.stop();
  });

  it('does not route to a claimant that vanished without $disconnect: the 410 clears it and the sender gets no-route', async () => {
    const tenant = uniqueName('vanish');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('ghostclaim');
    const store = connectionTableStores(dynamoClient(), { tableName: tableNames.connections, now: Date.now, connectionLifetimeSeconds: 600, maxPendingBytes: 1024 });
    const ghostId = `ghost${mintId().slice(-8)}=`;
    await store.connections.createConnection(tenant, ghostId, { tenant, tokenId: 'ghost', scopes: ['emit'] });
    await store.claims.claim(tenant, ghostId, session, { agent: 'ghost', control: { accepts: ALL_COMMANDS } });
    const phone = await controller(token, session);
    const cancel = command('control.cancel', session, { data: { scope: 'session' } });
    phone.send(cancel);
    expect(await phone.next(byCause(cancel.id as string))).toMatchObject({ type: 'error', code: 'no-route' });
    expect(await store.claims.claimsOf(tenant, session)).toEqual([]);
    expect((await storedEvents(tenant, session)).map((event) => event.id)).not.toContain(cancel.id);
    await phone.close();
  });

  it('answers roster with one entry per live claim and declarations verbatim, and refuses it on emitter connections', async () => {
    const tenant = uniqueName('roster');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('listed');
    const agent = await startAgent(token, session, ['control.cancel']);
    const consumer = await helloSocket({}, { token });
    consumer.send({ type: 'roster', id: 'r-1' });
    const roster = await consumer.next(isType('roster'));
    expect(roster.id).toBe('r-1');
    expect(roster.entries).toEqual([
      expect.objectContaining({ session, agent: 'sim', control: { accepts: ['control.cancel'], ack_window_ms: 10_000 }, emits: ['session', 'run', 'attention', 'control'] }),
    ]);
    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'e' } }, { token });
    emitter.send({ type: 'roster', id: 'r-2' });
    expect(await emitter.next((frame) => frame.id === 'r-2')).toMatchObject({ type: 'error', code: 'unauthorized' });
    emitter.send({ type: 'ping' });
    await emitter.next(isType('pong'));
    await emitter.close();
    await consumer.close();
    await agent.stop();
  });

  it('accepts events over the socket like POSTed ones and answers invalid ones in-band with the event id as cause', async () => {
    const session = uniqueName('wsingest');
    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } });
    const good = sessionEvent(session, 0);
    const bad: Record<string, unknown> = { ...sessionEvent(session, 1), seq: 'one' };
    emitter.send(good);
    emitter.send(bad);
    expect(await emitter.next(byCause(bad.id as string))).toMatchObject({ type: 'error', code: 'invalid-event' });
    const deadline = Date.now() + 5000;
    while ((await storedEvents('local', session)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await storedEvents('local', session)).map((event) => event.id)).toEqual([good.id]);
    await emitter.close();
  });
});
