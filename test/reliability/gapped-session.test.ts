/**
 * A gap delays only its own session (AEP-0001 §7.2: gaps are legal). On a stack of its own with
 * a long order wait (30 s), session A leaves a gap (0, then 2) while session B, on the same
 * stream shard (DynamoDB Local streams a table from one shard), keeps emitting: all of B's events
 * reach B's consumer while A's held event is still held, and A's events follow in order once its
 * gap is filled. Before, the wait held the whole fan-out batch, so B waited out A's gap too. How
 * much B's latency moves beside the gap is a timing figure, for the bench.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, post, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

/** Longer than B's eight round trips can take on a loaded machine: A's gap stays open throughout. */
const WAIT_MS = 30_000;
let stack: OwnStack;

beforeAll(async () => {
  stack = await startOwnStack({ env: { AEP_ORDER_WAIT_MS: String(WAIT_MS), AEP_LOCAL_POLL_MS: '50' } });
});

afterAll(async () => {
  await stack?.stop();
});

async function watcher(session: string): Promise<TestSocket> {
  const client = await helloSocket({ role: 'consumer' }, { baseUrl: stack.baseUrl, token: stack.token });
  client.send({ type: 'subscribe', id: 'w', filter: { session } });
  await client.next(isType('subscribed'));
  return client;
}

/** Posts B's next event and waits until B's consumer has it. */
async function deliverOne(consumer: TestSocket, session: string, seq: number): Promise<void> {
  expect((await post(stack.baseUrl, stack.token, [eventOf(session, seq)])).status).toBe(202);
  await consumer.next((frame: Frame) => frame.session === session && frame.seq === seq, 20_000);
}

describe('a gapped session', () => {
  it("holds only its own events: another session on the same shard goes on delivering while its gap is open", async () => {
    const gapped = uniqueName('gapped');
    const busy = uniqueName('busy');
    const [gappedWatcher, busyWatcher] = await Promise.all([watcher(gapped), watcher(busy)]);
    for (let seq = 0; seq < 4; seq += 1) await deliverOne(busyWatcher, busy, seq);
    expect((await post(stack.baseUrl, stack.token, [eventOf(gapped, 0)])).status).toBe(202);
    await gappedWatcher.next((frame: Frame) => frame.seq === 0, 20_000);
    expect((await post(stack.baseUrl, stack.token, [eventOf(gapped, 2)])).status).toBe(202);
    // While A's 2 waits for 1, B goes on, one round trip at a time.
    for (let seq = 4; seq < 12; seq += 1) await deliverOne(busyWatcher, busy, seq);
    const seqsOfA = () => gappedWatcher.all((frame: Frame) => frame.session === gapped).map((frame) => frame.seq);
    expect(seqsOfA()).toEqual([0]);
    // A fills its gap: 1, then the held 2, in order.
    expect((await post(stack.baseUrl, stack.token, [eventOf(gapped, 1)])).status).toBe(202);
    await gappedWatcher.next((frame: Frame) => frame.seq === 2, 20_000);
    expect(seqsOfA()).toEqual([0, 1, 2]);
    expect(busyWatcher.all((frame: Frame) => frame.session === busy).map((frame) => frame.seq)).toEqual(Array.from({ length: 12 }, (_, seq) => seq));
    await Promise.all([gappedWatcher.close(), busyWatcher.close()]);
  }, 120_000);
});
