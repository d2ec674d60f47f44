/**
 * Sessions are emitter-scoped (AEP-0001 §5.2): two emitters (two `source`s) emitting `seq`
 * 0..N under one session name are two sessions that share a name. Both are stored, delivered
 * live and replayed; the roster shows both claims (AEP-0003 §4.1 rule 5) and a command to the
 * name is refused `ambiguous` (AEP-0004 §4.5). A different event from the same emitter at a
 * position it holds is still a position conflict.
 */
import { describe, expect, it } from 'vitest';
import { mintId, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, waitForCount } from '../support/ws-client.ts';
import type { Frame } from '../support/ws-client.ts';

// Both emitters' events fit the shared stack's replay window (20).
const EVENTS = 8;

describe('emitter-scoped sessions', () => {
  it('stores, delivers and replays two emitters of one session name, shows both claims, and refuses a command to the name as ambiguous', async () => {
    const tenant = uniqueName('emitters');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('shared-name');
    const sourceOf = (host: string) => `aep://${host}/agent/builder/session/${session}`;
    const eventOf = (host: string, seq: number) => sessionEvent(session, seq, { agent: 'builder', source: sourceOf(host) });
    const isEvent = (frame: Frame) => frame.session === session && typeof frame.seq === 'number';
    const label = (frame: Frame) => `${new URL(String(frame.source)).host}:${frame.seq}`;

    const watcher = await helloSocket({ role: 'consumer' }, { token });
    watcher.send({ type: 'subscribe', id: 'w', filter: { session } });
    await watcher.next(isType('subscribed'));
    const emitters = await Promise.all(['host-a', 'host-b'].map((host) => helloSocket({ role: 'both', identity: { agent: 'builder', instance: host }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token })));
    for (let seq = 0; seq < EVENTS; seq += 1) {
      emitters[0]!.send(eventOf('host-a', seq));
      emitters[1]!.send(eventOf('host-b', seq));
    }
    const live = await waitForCount(watcher, isEvent, 2 * EVENTS, 20_000);
    const expected = ['host-a', 'host-b'].flatMap((host) => Array.from({ length: EVENTS }, (_, seq) => `${host}:${seq}`)).sort();
    expect(live.map(label).sort()).toEqual(expected);
    // Each emitter's own session arrives whole (its order is live-order.test.ts's subject).
    for (const host of ['host-a', 'host-b']) expect(live.filter((frame) => label(frame).startsWith(host)).map((frame) => frame.seq as number).sort((a, b) => a - b)).toEqual(Array.from({ length: EVENTS }, (_, seq) => seq));
    expect(emitters.flatMap((emitter) => emitter.all(isType('error')))).toEqual([]);

    // Replay serves both, in position order.
    const replayer = await helloSocket({ role: 'consumer' }, { token });
    replayer.send({ type: 'subscribe', id: 'r', filter: { session }, from: [{ session, epoch: 0, seq: -1 }] });
    const replayed = await waitForCount(replayer, isEvent, 2 * EVENTS, 20_000);
    expect(replayed.map(label).sort()).toEqual(expected);
    expect(replayed.map((frame) => frame.seq)).toEqual([...replayed.map((frame) => frame.seq as number)].sort((a, b) => a - b));

    // A different event from the same emitter at a position it holds is refused.
    const conflicting: Record<string, unknown> = { ...eventOf('host-a', 3), subject: 'another event' };
    emitters[0]!.send(conflicting);
    expect(await emitters[0]!.next((frame) => frame.cause === conflicting.id)).toMatchObject({ type: 'error', code: 'invalid-event' });

    // The roster: one entry per live claim, both under the name.
    const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token });
    phone.send({ type: 'roster', id: 'r1' });
    const roster = await phone.next(isType('roster'));
    expect((roster.entries as Array<{ session: string; instance: string }>).filter((entry) => entry.session === session).map((entry) => entry.instance).sort()).toEqual(['host-a', 'host-b']);
    const cancel = { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session, data: { scope: 'session' } };
    phone.send(cancel);
    expect(await phone.next((frame) => frame.cause === cancel.id)).toMatchObject({ type: 'error', code: 'ambiguous' });
    expect(emitters.flatMap((emitter) => emitter.all((frame) => frame.id === cancel.id))).toEqual([]);
    await Promise.all([watcher, replayer, phone, ...emitters].map((client) => client.close()));
  }, 60_000);
});
