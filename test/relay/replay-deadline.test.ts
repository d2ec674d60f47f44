/**
 * A replay bounded by its binding's time (the WebSocket's socket function has 28 s): past the
 * deadline it stops and says so, so the binding can end the subscription instead of leaving it
 * replaying with nothing to finish it. In-memory ports; no DynamoDB.
 */
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../src/protocol/attr-match.ts';
import { OUT_OF_TIME, replayInto } from '../../src/relay/subscribe/open-subscription.ts';
import type { SubscriptionSpec } from '../../src/relay/subscribe/open-subscription.ts';
import type { RelayRuntime } from '../../functions/runtime/relay-runtime.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

const session = 'bounded';
const events = Array.from({ length: 5 }, (_, seq) => sessionEvent(session, seq));
const source = events[0]!.source as string;

function runtimeAt(clock: { now: number }): Pick<RelayRuntime, 'eventLog' | 'sessionOrder' | 'config' | 'now'> {
  return {
    eventLog: { readWindow: async () => events.map((event) => ({ raw: JSON.stringify(event), anchor: { epoch: 0, seq: event.seq as number } })), listSessions: async () => ({ items: [session] }) } as unknown as RelayRuntime['eventLog'],
    sessionOrder: { releasedPoints: async () => new Map([[source, { epoch: 0, seq: 4 }]]), lateBelow: async () => [] } as unknown as RelayRuntime['sessionOrder'],
    config: { replayBuffer: 100, replaySettleMs: 0 } as RelayRuntime['config'],
    now: () => clock.now,
  };
}

const spec: SubscriptionSpec = { tenant: 't', connectionId: 'c', subscriptionId: 's', filter: { session }, matches: compileFilter({ session }), ceiling: undefined, from: [{ session, epoch: 0, seq: -1 }] };

describe('replay deadline', () => {
  it('stops at the deadline and answers out-of-time, having written only what came before it', async () => {
    const clock = { now: 1000 };
    const written: number[] = [];
    const outcome = await replayInto(runtimeAt(clock), spec, {
      event: async (text) => {
        written.push((JSON.parse(text) as { seq: number }).seq);
        // Each write takes 10 ms of the budget.
        clock.now += 10;
        return true;
      },
      exhausted: async () => true,
      deadlineMs: 1025,
    });
    expect(outcome).toBe(OUT_OF_TIME);
    expect(written).toEqual([0, 1, 2]);
  });

  it('finishes within the deadline and answers what the opening gave', async () => {
    const clock = { now: 1000 };
    const outcome = await replayInto(runtimeAt(clock), spec, { event: async () => true, exhausted: async () => true, deadlineMs: 60_000 });
    expect(outcome).not.toBe(OUT_OF_TIME);
    expect(outcome).toBeDefined();
  });
});
