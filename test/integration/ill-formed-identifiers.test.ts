import { describe, expect, it } from 'vitest';
import { postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

/**
 * Identifiers holding a lone UTF-16 surrogate (`\ud800`) have no UTF-8 form: DynamoDB refuses or
 * rewrites them, so the relay refuses them everywhere they would become keys.
 */
const LONE = ['\ud800', '\udfff', 'a\ud83d', '\ude00b'];

describe('ill-formed Unicode identifiers', () => {
  it('refuses them in id, session, agent and source with invalid-event over HTTP and WebSocket, storing nothing', async () => {
    const tenant = uniqueName('utf');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const session = uniqueName('s');
    const socket = await helloSocket({ role: 'both', identity: { agent: 'tester' } }, { token });
    for (const bad of LONE) {
      const variants = [
        sessionEvent(session, 1, { id: `id-${bad}` }),
        sessionEvent(`${session}${bad}`, 1),
        sessionEvent(session, 1, { agent: `tester${bad}` }),
        sessionEvent(session, 1, { source: `aep://h/agent/tester/session/${bad}` }),
      ];
      for (const event of variants) {
        const text = JSON.stringify(event);
        expect(text).toContain('\\u');
        const response = await postEvents(text, { token });
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ error: 'invalid-event' });
        socket.sendRaw(text);
        const refusal = await socket.next((frame) => frame.type === 'error' && frame.cause === event.id);
        expect(refusal).toMatchObject({ code: 'invalid-event' });
        socket.frames.length = 0;
      }
    }
    // A well-formed pair (an emoji) is fine.
    expect((await postEvents(JSON.stringify(sessionEvent(session, 2, { id: `id-\ud83d\ude00` })), { token })).status).toBe(202);
    expect((await storedEvents(tenant, session)).map((event) => event.seq)).toEqual([2]);
    await socket.close();
  });

  it('refuses them in the sessions a subscription or stream names', async () => {
    const token = await tenantWithToken(uniqueName('utf-sub'), ['consume']);
    const socket = await helloSocket({}, { token });
    socket.send({ type: 'subscribe', id: 'bad', filter: { session: 'x\ud800' } });
    expect(await socket.next((frame) => frame.id === 'bad')).toMatchObject({ type: 'error', code: 'invalid-filter' });
    socket.send({ type: 'subscribe', id: 'bad-from', filter: {}, from: [{ session: '\udc00', epoch: 0, seq: 0 }] });
    expect(await socket.next((frame) => frame.id === 'bad-from')).toMatchObject({ type: 'error', code: 'invalid-filter' });
    socket.send({ type: 'subscribe', id: 'ok', filter: {} });
    await socket.next(isType('subscribed'));
    // Over SSE the filter travels URL-encoded; a lone surrogate is sent as its JSON escape.
    const stream = await openStream({ filter: '{"session":"x\\ud800"}', live: '0' }, { token });
    expect(stream.status).toBe(400);
    expect(stream.body).toMatchObject({ error: 'invalid-filter' });
    await socket.close();
  });
});
