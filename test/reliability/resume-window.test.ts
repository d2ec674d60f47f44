/**
 * The resume window, made deterministic by stopping the stream poller (fan-out lag, on this
 * file's own stack with the fault layer on): a consumer holding 4 resumes while 3 (stored after
 * 4, so late) and 5 wait for fan-out, then drops, then resumes after the last position it got.
 * Replay serving 5 before fan-out recorded 3 as late is what lost 3: the consumer would resume
 * after 5, and 3 was stored before 5. Replay serves nothing above the release point, so it
 * cannot; every admitted event reaches the consumer, on the WebSocket and on SSE. (Before the
 * session top existed, the same steps served 5 while lagging and the consumer never got 3.)
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';
import { eventOf, postAccepted, sleep, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';

const SETTLE_MS = 400;
let stack: OwnStack;

beforeAll(async () => {
  // The order wait well inside the settle bound: a replay right after 4 is stored sees it released past the gap at 3.
  stack = await startOwnStack({ env: { AEP_REPLAY_SETTLE_MS: String(SETTLE_MS), AEP_ORDER_WAIT_MS: '100' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

afterEach(async () => {
  await stack.startPoller();
});

const accepted = (events: Array<Record<string, unknown>>) => postAccepted(stack, events);

const seqsOf = (session: string, frames: readonly Frame[]) => frames.filter((frame) => frame.session === session && typeof frame.seq === 'number').map((frame) => frame.seq as number);

/** A WebSocket consumer of one session resuming after `seq` (-1: from the start). */
async function resumeSocket(session: string, seq: number): Promise<TestSocket> {
  const socket = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.token });
  socket.send({ type: 'subscribe', id: 'sub', filter: { session }, from: [{ session, epoch: 0, seq }] });
  await socket.next(isType('subscribed'));
  return socket;
}

/** A `live=0` SSE read of one session after `seq`; answers the seqs it served. */
async function readAfter(session: string, seq: number): Promise<number[]> {
  const stream = await openStream({ filter: JSON.stringify({ session }), from: JSON.stringify([{ session, epoch: 0, seq }]), live: '0' }, { baseUrl: stack.baseUrl, token: stack.token });
  expect(stream.status).toBe(200);
  await stream.ended;
  return stream.messages().map((message) => message.json.seq as number);
}

describe('resume while fan-out lags behind a late event', () => {
  it('WebSocket: the consumer never comes to hold a position above a late event it lacks', async () => {
    const session = uniqueName('window-ws');
    await accepted([0, 1, 2, 4].map((seq) => eventOf(session, seq)));
    const first = await resumeSocket(session, -1);
    await first.next((frame) => frame.session === session && frame.seq === 4);
    const received = new Set(seqsOf(session, first.frames));
    first.socket.terminate();

    await stack.stopPoller();
    // Stored in line order: 3 after 4 (late), then 5; fan-out has not got to either.
    await accepted([3, 5].map((seq) => eventOf(session, seq)));
    const second = await resumeSocket(session, 4);
    // Its replay waits out the settle bound, then serves nothing above the release point (4).
    await sleep(SETTLE_MS + 600);
    const gotWhileLagging = seqsOf(session, second.frames);
    expect(gotWhileLagging).toEqual([]);
    for (const seq of gotWhileLagging) received.add(seq);
    // It drops before live delivery could bring them.
    second.socket.terminate();

    await stack.startPoller();
    const last = Math.max(...received, ...gotWhileLagging);
    const third = await resumeSocket(session, last);
    await third.next((frame) => frame.session === session && frame.seq === 5, 10_000);
    for (const seq of seqsOf(session, third.frames)) received.add(seq);
    expect([...received].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
    third.socket.terminate();
  });

  it('SSE live=0: a read while fan-out lags ends without what it has not reached; the next read after the last position returns it', async () => {
    const session = uniqueName('window-sse');
    await accepted([0, 1, 2, 4].map((seq) => eventOf(session, seq)));
    const received = new Set(await readAfter(session, -1));
    expect([...received]).toEqual([0, 1, 2, 4]);

    await stack.stopPoller();
    await accepted([3, 5].map((seq) => eventOf(session, seq)));
    const whileLagging = await readAfter(session, 4);
    expect(whileLagging).toEqual([]);
    for (const seq of whileLagging) received.add(seq);

    await stack.startPoller();
    const last = Math.max(...received, ...whileLagging);
    for (const seq of await readAfter(session, last)) received.add(seq);
    expect([...received].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
