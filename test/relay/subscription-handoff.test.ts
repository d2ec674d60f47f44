/**
 * The replay-to-live handoff's skip rule, as pure logic over in-memory ports: which parked
 * events a consumer gets after its replay.
 */
import { describe, expect, it } from 'vitest';
import type { ParkedEvent, StoredSubscription } from '../../src/relay/domain/subscription.ts';
import type { ParkingPort } from '../../src/relay/ports/parking.ts';
import type { SubscriptionsPort } from '../../src/relay/ports/subscriptions.ts';
import { Opening } from '../../src/relay/order/consumer-has.ts';
import { handOffToLive, SUBSCRIPTION_GONE } from '../../src/relay/subscribe/subscription-handoff.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

const session = 'handoff';

function parked(seq: number, flags: Omit<ParkedEvent, 'raw'> = {}): ParkedEvent {
  return { raw: JSON.stringify(sessionEvent(session, seq)), ...flags };
}

const source = sessionEvent(session, 0).source as string;

function entry(pending: ParkedEvent[], pk = 'p'): StoredSubscription {
  return { connectionId: 'c', subscriptionId: 's', filter: '{}', state: 'replaying', pending, indexKey: { pk, sk: 's' } };
}

/**
 * Runs the handoff over in-memory ports: `readEntries` answers each read of the subscription's
 * entries, `flipSucceeds` each attempt to go live (numbered from 1). Answers whether it went live,
 * the seqs it sent, and each attempt's entries with how many of their parked events it drained.
 */
async function handOff(readEntries: () => StoredSubscription[], flipSucceeds: (attempt: number) => boolean, opening: Opening) {
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
      opening,
      deliver: async (text) => {
        sent.push((JSON.parse(text) as { seq: number }).seq);
        return true;
      },
    },
  );
  return { live, sent, flips };
}

describe('replay-to-live handoff', () => {
  it('skips what the opening gave (at or below the resume point or the release point its replay read, or replayed itself) and delivers late ones, redeliveries and what lies above', async () => {
    const stored = entry([
      // At or below the resume point (2): the consumer has it.
      parked(1),
      // At or below the release point the replay read (9): the replay served it.
      parked(5),
      // Replayed itself, late or not.
      parked(3, { late: true }),
      // Late: released after the release point passed it, new to this consumer.
      parked(4, { late: true }),
      // A redelivery always goes (AEP-0003 §5).
      parked(6, { redelivery: true }),
      // Above everything it was given.
      parked(12),
    ]);
    const opening = new Opening();
    opening.resumeAfter({ session, epoch: 0, seq: 2 });
    opening.replayRead(session, new Map([[source, { epoch: 0, seq: 9 }]]));
    opening.gave(sessionEvent(session, 3) as never);
    const { live, sent, flips } = await handOff(() => [stored], () => true, opening);
    expect(live).toBe(true);
    expect(sent).toEqual([4, 6, 12]);
    expect(flips).toEqual([[['p', 6]]]);
  });

  it("merges every entry's parked events in position order, and flips all entries at once, again when more were parked meanwhile", async () => {
    // Two index entries (say, two type segments): 7 parked on one, 5 on the other.
    const tools = entry([parked(7)], 'tools');
    const progress = entry([parked(5)], 'progress');
    let reads = 0;
    const readEntries = () => {
      reads += 1;
      // By the second read, fan-out parked 8 on the tools entry.
      return reads === 1 ? [tools, progress] : [{ ...tools, pending: [...tools.pending, parked(8)] }, progress];
    };
    const opening = new Opening();
    opening.resumeAfter({ session, epoch: 0, seq: 2 });
    const { live, sent, flips } = await handOff(readEntries, (attempt) => attempt > 1, opening);
    expect(live).toBe(true);
    expect(sent).toEqual([5, 7, 8]);
    expect(flips).toEqual([
      [['tools', 1], ['progress', 1]],
      [['tools', 2], ['progress', 1]],
    ]);
  });

  it('says the subscription is gone, not that a delivery failed, when its own unsubscribe took it while it opened', async () => {
    let reads = 0;
    // The flip fails (more was parked, or the entry went), and the next read finds no entry.
    const readEntries = () => (++reads === 1 ? [entry([parked(5)])] : []);
    const { live, sent } = await handOff(readEntries, () => false, new Opening());
    expect(live).toBe(SUBSCRIPTION_GONE);
    expect(sent).toEqual([5]);
  });
});
