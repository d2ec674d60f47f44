/**
 * A gap delays only its own session (AEP-0001 §7.2: gaps are legal). On a stack of its own with
 * a long order wait (3 s), session A leaves a gap (0, then 2) while session B, on the same
 * stream shard (DynamoDB Local streams a table from one shard), keeps emitting: B's events
 * reach B's consumer while A's held event is still waiting, as fast as B alone. Before, the
 * wait held the whole fan-out batch, so B waited out A's gap too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, post, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

const WAIT_MS = 3000;
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

/** Posts B's next event and answers how long it took to reach B's consumer (ms). */
async function latencyOf(consumer: TestSocket, session: string, seq: number): Promise<number> {
  const sentAt = Date.now();
  expect((await post(stack.baseUrl, stack.token, [eventOf(session, seq)])).status).toBe(202);
  await consumer.next((frame: Frame) => frame.session === session && frame.seq === seq, 10_000);
  return Date.now() - sentAt;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('a gapped session', () => {
  it("delays another session's delivery on the same shard by less than 100 ms, and releases its own event once its wait is over", async () => {
    const gapped = uniqueName('gapped');
    const busy = uniqueName('busy');
    const [gappedWatcher, busyWatcher] = await Promise.all([watcher(gapped), watcher(busy)]);
    // B alone: the yardstick, on this machine, in this run.
    const alone: number[] = [];
    for (let seq = 0; seq < 8; seq += 1) alone.push(await latencyOf(busyWatcher, busy, seq));

    expect((await post(stack.baseUrl, stack.token, [eventOf(gapped, 0)])).status).toBe(202);
    await gappedWatcher.next((frame: Frame) => frame.seq === 0, 10_000);
    const gapOpenedAt = Date.now();
    expect((await post(stack.baseUrl, stack.token, [eventOf(gapped, 2)])).status).toBe(202);
    // While A's 2 waits for 1, B goes on.
    const beside: number[] = [];
    for (let seq = 8; seq < 16; seq += 1) beside.push(await latencyOf(busyWatcher, busy, seq));
    const busyDoneAt = Date.now();
    const held = await gappedWatcher.next((frame: Frame) => frame.seq === 2, 20_000);
    const releasedAfterMs = Date.now() - gapOpenedAt;
    console.log(`[gapped-session] B alone: median ${median(alone)} ms; B beside A's open gap: median ${median(beside)} ms; A's held event released after ${releasedAfterMs} ms (wait ${WAIT_MS} ms)`);

    expect(held.seq).toBe(2);
    // B's events all arrived while A's gap was still open...
    expect(busyDoneAt - gapOpenedAt).toBeLessThan(WAIT_MS);
    expect(gappedWatcher.all((frame: Frame) => frame.session === gapped).map((frame) => frame.seq)).toEqual([0, 2]);
    // ...and no slower than B alone, but for noise.
    expect(median(beside) - median(alone)).toBeLessThan(100);
    // A's own event waited its wait, then went out past the gap.
    expect(releasedAfterMs).toBeGreaterThanOrEqual(WAIT_MS - 200);
    await Promise.all([gappedWatcher.close(), busyWatcher.close()]);
  }, 60_000);
});
