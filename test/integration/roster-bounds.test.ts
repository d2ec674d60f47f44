import { describe, expect, it } from 'vitest';
import { sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket, waitForCount } from '../support/ws-client.ts';

/**
 * One emitter cannot deny the roster to its tenant: hello declarations are bounded, and a
 * roster larger than a frame comes as several frames under API Gateway's 32 KB frame limit.
 */
const FRAME_LIMIT = 32 * 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('roster bounds', () => {
  it('refuses a hello declaring 28 KB of emits with invalid-hello, and the roster stays answerable', async () => {
    const tenant = uniqueName('roster-big');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const bloated = await openSocket({ token });
    const emits = Array.from({ length: 1100 }, (_, index) => `category-${index}-padding-pad`);
    expect(Buffer.byteLength(JSON.stringify(emits))).toBeGreaterThan(28 * 1024);
    bloated.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'big' }, capabilities: { emits } });
    expect(await bloated.next(isType('error'))).toMatchObject({ code: 'invalid-hello' });
    await bloated.closed;
    const consumer = await helloSocket({}, { token });
    consumer.send({ type: 'roster', id: 'r' });
    expect(await consumer.next(isType('roster'))).toMatchObject({ id: 'r', entries: [] });
    await consumer.close();
  });

  it('splits a roster over several frames, each under 32 KB, with every claim exactly once', async () => {
    const tenant = uniqueName('roster-split');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    // Declarations just under the hello bound, claiming enough sessions to need several frames.
    const emits = Array.from({ length: 300 }, (_, index) => `c${index}-xxxxxxxxxxxxxx`);
    const sessions: string[] = [];
    const emitters = [];
    for (let index = 0; index < 3; index += 1) {
      const emitter = await helloSocket({ role: 'emitter', identity: { agent: `agent-${index}` }, capabilities: { emits } }, { token });
      for (let claim = 0; claim < 5; claim += 1) {
        const session = uniqueName(`s${index}-${claim}`);
        sessions.push(session);
        emitter.send(sessionEvent(session, 0, { agent: `agent-${index}`, source: `aep://h/agent/agent-${index}/session/${session}` }));
      }
      emitters.push(emitter);
    }
    await pause(800);
    const consumer = await helloSocket({}, { token });
    consumer.send({ type: 'roster', id: 'big' });
    // Parts arrive until one without `more`.
    const deadline = Date.now() + 10_000;
    while (!consumer.all((frame) => frame.type === 'roster' && frame.id === 'big' && frame.more !== true).length) {
      if (Date.now() > deadline) throw new Error('no final roster part');
      await pause(50);
    }
    const parts = consumer.all((frame) => frame.type === 'roster' && frame.id === 'big');
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(FRAME_LIMIT);
    expect(parts.slice(0, -1).every((part) => part.more === true)).toBe(true);
    const listed = parts.flatMap((part) => part.entries as Array<{ session: string; emits: unknown }>);
    expect(listed.map((entry) => entry.session).sort()).toEqual([...sessions].sort());
    expect(listed.every((entry) => JSON.stringify(entry.emits) === JSON.stringify(emits))).toBe(true);
    await waitForCount(consumer, isType('roster'), parts.length);
    await Promise.all([consumer.close(), ...emitters.map((emitter) => emitter.close())]);
  });
});
