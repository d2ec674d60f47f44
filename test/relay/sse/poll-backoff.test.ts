/**
 * The idle SSE stream's inbox poll schedule (src/relay/sse/poll-backoff.ts): the base rate while
 * deliveries come and for the first empty reads, then doubling to the cap, and back to the base
 * on the first read that finds a delivery.
 */
import { describe, expect, it } from 'vitest';
import { addedLatencyBoundMs, PollBackoff, pollDelayMs, waitBeforeNextRead } from '../../../src/relay/sse/poll-backoff.ts';

const deployed = { pollMs: 250, idlePollMs: 2_000, backoffAfterPolls: 8 };

describe('SSE inbox poll backoff', () => {
  it('stays at the base rate for the first empty reads, then doubles up to the cap', () => {
    const waits = Array.from({ length: 16 }, (_, index) => pollDelayMs(deployed, index));
    expect(waits).toEqual([250, 250, 250, 250, 250, 250, 250, 250, 250, 500, 1000, 2000, 2000, 2000, 2000, 2000]);
  });

  it('never goes past the cap, however long the stream has been idle', () => {
    expect(pollDelayMs(deployed, 1_000_000)).toBe(2_000);
    expect(pollDelayMs({ pollMs: 300, idlePollMs: 2_000, backoffAfterPolls: 0 }, 3)).toBe(2_000);
    expect(pollDelayMs({ pollMs: 300, idlePollMs: 2_000, backoffAfterPolls: 0 }, 2)).toBe(1_200);
  });

  it('does not back off when the cap is at or below the base', () => {
    expect(pollDelayMs({ pollMs: 250, idlePollMs: 250, backoffAfterPolls: 8 }, 100)).toBe(250);
    expect(pollDelayMs({ pollMs: 250, idlePollMs: 100, backoffAfterPolls: 0 }, 100)).toBe(250);
    expect(addedLatencyBoundMs({ pollMs: 250, idlePollMs: 100, backoffAfterPolls: 0 })).toBe(0);
  });

  it('returns to the base rate on the first read that finds a delivery, and backs off again from scratch', () => {
    const backoff = new PollBackoff(deployed);
    const idle = Array.from({ length: 12 }, () => backoff.afterRead(0));
    expect(idle.at(-1)).toBe(2_000);
    expect(backoff.afterRead(3)).toBe(250);
    const again = Array.from({ length: 9 }, () => backoff.afterRead(0));
    expect(again).toEqual([250, 250, 250, 250, 250, 250, 250, 250, 500]);
  });

  it('bounds the added latency of the first event after a quiet period by the cap minus the base', () => {
    expect(addedLatencyBoundMs(deployed)).toBe(1_750);
    // Whatever the idle history, no wait exceeds base + bound.
    for (let empty = 0; empty < 40; empty += 1) expect(pollDelayMs(deployed, empty)).toBeLessThanOrEqual(deployed.pollMs + addedLatencyBoundMs(deployed));
  });
});

describe('the wait before the next read', () => {
  it('is the backoff delay unless a periodic duty (heartbeat, slot renewal, revalidation, end) falls due sooner', () => {
    expect(waitBeforeNextRead(2_000, [15_000, 40_000, 30_000])).toBe(2_000);
    // A 1.5 s slot lease renewed every 500 ms: the renewal due in 300 ms cuts a 2 s wait short.
    expect(waitBeforeNextRead(2_000, [15_000, 300, 30_000])).toBe(300);
    expect(waitBeforeNextRead(2_000, [-50, 300])).toBe(0);
    expect(waitBeforeNextRead(250, [])).toBe(250);
  });
});
