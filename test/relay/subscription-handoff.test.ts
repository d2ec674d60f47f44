/**
 * The replay-to-live handoff's skip rule, as pure logic over in-memory ports: which parked
 * events a consumer gets after its replay.
 */
import { describe, expect, it } from 'vitest';
import type { ParkedEvent, StoredSubscription } from '../../src/relay/domain/subscription.ts';
import type { ParkingPort } from '../../src/relay/ports/parking.ts';
import type { SubscriptionsPort } from '../../src/relay/ports/subscriptions.ts';
import { DeliveredPositions, handOffToLive } from '../../src/relay/subscription-handoff.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

const session = 'handoff';

function parked(seq: number, inOrder: boolean): ParkedEvent {
  return { raw: JSON.stringify(sessionEvent(session, seq)), inOrder };
}

function entry(pending: ParkedEvent[], pk = 'p'): StoredSubscription {
  return { connectionId: 'c', subscriptionId: 's', filter: '{}', state: 'replaying', pending, covered: {}, indexKey: { pk, sk: 's' } };
}

/**
 * Runs the handoff over in-memory ports: `readEntries` answers each read of the subscription's
 * entries, `flipSucceeds` each attempt to go live (numbered from 1). Answers whether it went live,
 * the seqs it sent, and each attempt's entries with how many of their parked events it drained.
 */
async function handOff(readEntries: () => StoredSubscription[], flipSucceeds: (attempt: number) => boolean, delivered: DeliveredPositions, alsoDeliver?: ParkedEvent[]) {
  const flips: Array<Array<[string, number]>> = [];
  const subscriptions = { subscriptionEntries: async () => readEntries() } as unknown as SubscriptionsPort;
  const parking: ParkingPort = {
    parkPending: async () => 'not-replaying' as const,
    goLive: async (entries) => {
      flips.push(entries.map((drainedEntry) => [drainedEntry.subscription.indexKey.pk, drainedEntry.drained]));
      return flipSucceeds(flips.length);
    },
  };
  const sent: number[] = [];
  const live = await handOffToLive(
    { subscriptions, parking },
    {
      tenant: 't',
      connectionId: 'c',
      subscriptionId: 's',
      ceiling: undefined,
      delivered,
      deliver: async (text) => {
        sent.push((JSON.parse(text) as { seq: number }).seq);
        return true;
      },
      ...(alsoDeliver === undefined ? {} : { alsoDeliver }),
    },
  );
  return { live, sent, flips };
}

describe('replay-to-live handoff', () => {
  it('skips what the consumer holds (a replayed position, or an in-order event at or below its highest) and delivers late ones and what lies above', async () => {
    const stored = entry([
      // At or below the resume point (2), stored in order: the consumer has it.
      parked(1, true),
      // Below the newest replayed position (9), stored in order: replayed, or before the served window.
      parked(5, true),
      // Replayed itself.
      parked(9, false),
      // Below, but stored late: may be new to the consumer.
      parked(4, false),
      // Above everything it was given.
      parked(12, true),
    ]);
    const delivered = new DeliveredPositions();
    delivered.raise({ session, epoch: 0, seq: 2 });
    delivered.add({ session, epoch: 0, seq: 9 });
    const { live, sent, flips } = await handOff(() => [stored], () => true, delivered);
    expect(live).toBe(true);
    expect(sent).toEqual([4, 12]);
    expect(flips).toEqual([[['p', 5]]]);
  });

  it("merges every entry's parked events and the catch-up in position order, and flips all entries at once, again when more were parked meanwhile", async () => {
    // Two index entries (say, two type segments): 7 parked on one, 5 on the other, 6 from the catch-up.
    const tools = entry([parked(7, true)], 'tools');
    const progress = entry([parked(5, true)], 'progress');
    let reads = 0;
    const readEntries = () => {
      reads += 1;
      // By the second read, fan-out parked 8 on the tools entry.
      return reads === 1 ? [tools, progress] : [{ ...tools, pending: [...tools.pending, parked(8, true)] }, progress];
    };
    const delivered = new DeliveredPositions();
    delivered.raise({ session, epoch: 0, seq: 2 });
    const { live, sent, flips } = await handOff(readEntries, (attempt) => attempt > 1, delivered, [parked(6, false)]);
    expect(live).toBe(true);
    expect(sent).toEqual([5, 6, 7, 8]);
    expect(flips).toEqual([
      [['tools', 1], ['progress', 1]],
      [['tools', 2], ['progress', 1]],
    ]);
  });
});
