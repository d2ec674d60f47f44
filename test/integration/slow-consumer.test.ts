/**
 * A consumer that stops reading on a busy session (AEP-0003 §8.4): the relay must not drop its
 * `notice` events silently, and it must not close it without the `closing` frame that says
 * where to resume. It gets every event up to a point, then `closing` with that point, then the
 * close; the healthy consumer beside it gets everything.
 *
 * A stack of its own with a small client buffer toward each socket (the gateway answers 429
 * past it), so the paused consumer fills it with a few MB rather than the default's many.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { ndjson, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, waitForCount } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_LOCAL_WS_BUFFER_BYTES: String(64 * 1024), AEP_FANOUT_CLOSING_GRACE_MS: '120000', AEP_LOCAL_POLL_MS: '50' } });
});

afterAll(async () => {
  await stack?.stop();
});

const EVENTS = 3000;
const isEvent = (session: string) => (frame: Frame) => frame.session === session && typeof frame.aep === 'string';

async function subscriber(session: string, id: string): Promise<TestSocket> {
  const client = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.devToken });
  client.send({ type: 'subscribe', id, filter: { session } });
  await client.next((frame) => frame.type === 'subscribed' && frame.id === id);
  return client;
}

const ROUNDS = 1;

describe('a consumer that stops reading', () => {
  it(`gets its events up to a point, in order, then a closing frame with that point, then the close; the healthy one gets all (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round += 1) await stopsReading(uniqueName(`busy-${round}`));
  }, 360_000);
});

/**
 * One round: every notice event at or below each position the paused consumer was given, or
 * named in its closing frame, reached it, and in order (AEP-0003 §8.4, §3.5 rule 4).
 */
async function stopsReading(session: string): Promise<void> {
  {
    const paused = await subscriber(session, 'p');
    const healthy = await subscriber(session, 'h');
    paused.socket.pause();
    // 2 KB notice events: never droppable (AEP-0001 §8.1), so the relay must deliver or disconnect.
    const events = Array.from({ length: EVENTS }, (_, seq) => sessionEvent(session, seq, { severity: 'notice', type: 'x.test.load.blob', data: { blob: 'b'.repeat(2000) } }));
    for (let offset = 0; offset < EVENTS; offset += 300) {
      const response = await postEvents(ndjson(events.slice(offset, offset + 300)), { baseUrl: stack.baseUrl, token: stack.devToken, contentType: 'application/x-ndjson' });
      expect(response.status).toBe(202);
    }
    await waitForCount(healthy, isEvent(session), EVENTS, 60_000);
    expect(healthy.all(isEvent(session)).map((frame) => frame.seq)).toEqual(events.map((event) => event.seq));
    await expect.poll(() => stack.output().includes('disconnecting a consumer that cannot take a notice-or-above event'), { timeout: 30_000 }).toBe(true);

    // The consumer reads again: what the gateway had buffered arrives, then (once a later batch
    // finds room for it) the closing frame and the close.
    paused.socket.resume();
    const closing = paused.next(isType('closing'), 30_000);
    const nudges = setInterval(() => {
      void postEvents(JSON.stringify(sessionEvent(session, EVENTS + Math.floor(Math.random() * 1e6), { severity: 'notice' })), { baseUrl: stack.baseUrl, token: stack.devToken });
    }, 300);
    let frame: Frame;
    try {
      frame = await closing;
    } finally {
      clearInterval(nudges);
    }
    const { code } = await paused.closed;
    expect(code).toBe(1000);

    const received = paused.frames.filter(isEvent(session));
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(EVENTS);
    // A gap-free prefix, in order: nothing skipped before the point it is told.
    expect(received.map((event) => event.seq)).toEqual(events.slice(0, received.length).map((event) => event.seq));
    // The closing frame comes after the last event and names exactly that position, or none:
    // fan-out knows what it delivered in the batch that decided, so a decision taken at the
    // first post of a batch (the gateway's buffer filled at a batch boundary, which the
    // machine's load decides) names nothing, and the consumer resumes from its own position
    // (AEP-0003 §3.5 rule 4: consumers must not depend on the frame). Never a position above
    // what it got.
    expect(paused.frames.indexOf(frame)).toBeGreaterThan(paused.frames.indexOf(received.at(-1) as Frame));
    expect(paused.frames.slice(paused.frames.indexOf(frame) + 1).filter(isEvent(session))).toEqual([]);
    expect(frame.reason).toBe('backpressure');
    const last = received.at(-1) as Frame;
    expect([[], [{ sub: 'p', session, epoch: 0, seq: last.seq }]]).toContainEqual(frame.delivered);
    console.log(`[slow-consumer] ${session}: ${received.length} events in order, then closing ${(frame.delivered as unknown[]).length === 0 ? 'naming no position (decided at a batch boundary)' : `at ${String(last.seq)}`}`);
    await healthy.close();
  }
}
