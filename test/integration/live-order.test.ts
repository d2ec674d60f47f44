/**
 * Live order per emitter, as the design promises it (`src/relay/fanout/session-sequencer.ts`):
 * a session's events reach a live consumer in `(epoch, seq)` order, each once, unless one is
 * stored more than AEP_ORDER_WAIT_MS after a higher one (then it comes when it arrives, as
 * backfill, and resume still returns it: `resume-no-loss.test.ts`).
 *
 * The local stack stores a pipelined burst of 200 frames over a second or more (DynamoDB Local on
 * a small machine, frames run concurrently with the gateway's invocation jitter on, so they
 * really are stored out of order: the test checks that too). That spread is far wider than AWS
 * shows, so this stack's wait is set to cover it (5 s); the promise's condition then holds and
 * the order must be exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { pipelineEvents } from '../support/pipelined-session.ts';
import { uniqueName } from '../support/relay-fixtures.ts';
import { sessionItems } from '../support/stack-items.ts';
import { helloSocket, isType, waitForCount } from '../support/ws-client.ts';
import type { Frame } from '../support/ws-client.ts';

const EVENTS = 200;
let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_DEV_TOKEN: `aep_order_${process.pid}`, AEP_ORDER_WAIT_MS: '5000', AEP_LOCAL_WS_JITTER_MS: '20', AEP_LOCAL_POLL_MS: '50' } });
});

afterAll(async () => {
  await stack?.stop();
});

/** The session's events in the order the log stored them (their `storedAt`, then seq). */
async function storedOrder(session: string): Promise<number[]> {
  const items = (await sessionItems(stack.dynamoEndpoint, session, 'P#')).map((item) => ({ seq: (JSON.parse(item.raw?.S ?? '{}') as { seq: number }).seq, storedAt: Number(item.storedAt?.N) }));
  return items.sort((a, b) => a.storedAt - b.storedAt || a.seq - b.seq).map((item) => item.seq);
}

describe('live order of one emitter', () => {
  it(`delivers ${EVENTS} events pipelined over one socket to live consumers in seq order, each once`, async () => {
    const coordinates = { baseUrl: stack.baseUrl, token: stack.devToken };
    const session = uniqueName('live-order');
    const isEvent = (frame: Frame) => frame.session === session && typeof frame.type === 'string' && frame.type.includes('.');
    // One consumer pinned to the session, one filtering by type only: both indexes fan-out reads.
    const pinned = await helloSocket({ role: 'consumer' }, coordinates);
    pinned.send({ type: 'subscribe', id: 'pinned', filter: { session } });
    const byType = await helloSocket({ role: 'consumer' }, coordinates);
    byType.send({ type: 'subscribe', id: 'by-type', filter: { type: 'progress.*' } });
    await pinned.next(isType('subscribed'));
    await byType.next(isType('subscribed'));
    const { emitter } = await pipelineEvents(coordinates, session, EVENTS);
    const inSeqOrder = Array.from({ length: EVENTS }, (_, seq) => seq);
    for (const consumer of [pinned, byType]) {
      await waitForCount(consumer, isEvent, EVENTS, 45_000);
      // Give a duplicate time to show up, if one were coming.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(consumer.all(isEvent).map((frame) => frame.seq)).toEqual(inSeqOrder);
    }
    expect(emitter.all(isType('error'))).toEqual([]);
    // The frames really were stored out of order.
    expect(await storedOrder(session)).not.toEqual(inSeqOrder);
    for (const client of [emitter, pinned, byType]) await client.close();
  }, 90_000);
});
