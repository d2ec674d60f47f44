/**
 * Delivery lanes under a worker failure (issue 28). The stack runs the lane worker function as
 * two processes (AEP_LOCAL_LANE_WORKERS) and splits any batch past 40 planned actions into
 * three lanes: fan-out runs one, the workers the others. The first process of each worker exits
 * mid-lane, after 25 posts, with posts in flight (AEP_LOCAL_LANE_CRASH_AFTER_POSTS); the local
 * Invoke endpoint answers that invocation as Lambda does (`FunctionError: Unhandled`) and starts a
 * fresh process. Across several batches, each through lanes, every consumer gets every event of
 * every session, and each session's first copies in order: the failed lane ran again from its
 * start (its duplicates are visible, legal, and deduped on `(source, id)`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, eventually, postAccepted, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';
import { helloSocket } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

const CONSUMERS = 60;
const SESSIONS = 2;
const ROUNDS = 3;
const EVENTS_PER_ROUND = 20;

let stack: OwnStack;

beforeAll(async () => {
  stack = await startOwnStack({
    env: {
      AEP_LOCAL_LANE_WORKERS: '2',
      AEP_LOCAL_LANE_CRASH_AFTER_POSTS: '25',
      AEP_FANOUT_LANE_DELIVERIES: '40',
      AEP_FANOUT_MAX_LANES: '3',
      AEP_FANOUT_TENANT_DELIVERIES: '1000000',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('delivery lanes when a lane worker fails mid-lane', () => {
  it('delivers every event to every consumer, each session in order, the failed lane run again', async () => {
    const sessions = Array.from({ length: SESSIONS }, () => uniqueName('lanes'));
    const consumers: TestSocket[] = await Promise.all(
      Array.from({ length: CONSUMERS }, async (_unused, index) => {
        const consumer = await helloSocket({ role: 'consumer' }, { baseUrl: stack.baseUrl, token: stack.token });
        consumer.send({ type: 'subscribe', id: `s${index}`, filter: {} });
        await consumer.next((frame: Frame) => frame.type === 'subscribed');
        return consumer;
      }),
    );
    const total = ROUNDS * EVENTS_PER_ROUND;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Each round is its own stream batch or more: 2 × 20 events to 60 consumers, 2,400 planned actions.
      const seqs = Array.from({ length: EVENTS_PER_ROUND }, (_unused, index) => round * EVENTS_PER_ROUND + index);
      await Promise.all(sessions.map((session) => postAccepted(stack, seqs.map((seq) => eventOf(session, seq)))));
      await eventually(
        () => consumers.every((consumer) => sessions.every((session) => seqsOf(consumer, session).includes((round + 1) * EVENTS_PER_ROUND - 1))),
        () => `round ${round}: ${consumers.filter((consumer) => sessions.some((session) => !seqsOf(consumer, session).includes((round + 1) * EVENTS_PER_ROUND - 1))).length} consumers short`,
        60_000,
      );
    }
    let duplicates = 0;
    for (const consumer of consumers) {
      for (const session of sessions) {
        const got = seqsOf(consumer, session);
        const firstCopies = got.filter((seq, index) => got.indexOf(seq) === index);
        expect(firstCopies).toEqual(Array.from({ length: total }, (_unused, seq) => seq));
        duplicates += got.length - firstCopies.length;
      }
    }
    const output = stack.process.output();
    const failedRuns = output.split('a delivery lane worker failed').length - 1;
    console.log([...new Set(output.split('\n').filter((line) => line.includes('a delivery lane worker failed')).map((line) => line.replace(/"timestamp":"[^"]*",/, '').replace(/.*"requestId":"[^"]*",/, '')))].join('\n'));
    console.log(`[lane-worker-crash] ${CONSUMERS} consumers × ${SESSIONS} sessions × ${total} events: every one delivered in order; ${failedRuns} lane runs failed and ran again, ${duplicates} duplicate deliveries`);
    // The fault really struck mid-lane: each worker's first process failed after posting part of its lane, once.
    expect(failedRuns).toBe(2);
    expect(duplicates).toBeGreaterThan(0);
    await Promise.all(consumers.map((consumer) => consumer.close()));
  }, 240_000);
});

function seqsOf(consumer: TestSocket, session: string): number[] {
  return consumer.all((frame: Frame) => frame.type !== 'closing' && frame.session === session && typeof frame.seq === 'number').map((frame) => frame.seq as number);
}
