import { describe, expect, it } from 'vitest';
import { MAX_POOL_SHARDS, keepStreamSlots, poolShardCapacities } from '../../src/relay/connections/connection-slots.ts';
import type { SlotDependencies, StreamSlots } from '../../src/relay/connections/connection-slots.ts';

describe('stream pool shards', () => {
  it('spread the pool over shards of about 50 slots whose capacities add up to the pool', () => {
    expect(poolShardCapacities(0)).toEqual([]);
    expect(poolShardCapacities(2)).toEqual([2]);
    expect(poolShardCapacities(180)).toEqual([45, 45, 45, 45]);
    expect(poolShardCapacities(101)).toEqual([34, 34, 33]);
    for (const max of [1, 7, 49, 50, 51, 180, 399, 400, 401, 5000]) {
      const shards = poolShardCapacities(max);
      expect(shards.reduce((sum, slots) => sum + slots, 0), String(max)).toBe(max);
      expect(shards.length).toBeLessThanOrEqual(MAX_POOL_SHARDS);
      expect(Math.max(...shards) - Math.min(...shards)).toBeLessThanOrEqual(1);
    }
  });
});

describe('a stream kept while it replays', () => {
  /** Quotas that record renewals and answer `held` for each (false: the slot was reclaimed). */
  function recordingSlots(held: () => boolean) {
    const renewals: Array<{ pool: string; until: number }> = [];
    const quotas = {
      renewConnection: async (pool: string, _id: string, until: number) => {
        renewals.push({ pool, until });
        return held();
      },
    };
    return { renewals, slots: { quotas, poster: {}, now: Date.now } as unknown as SlotDependencies };
  }
  const held: StreamSlots = { tenant: 'acme', streamId: 'sse-1', shard: 2, shared: true };

  it('renews every slot it holds each third of the lease until stopped', async () => {
    const { renewals, slots } = recordingSlots(() => true);
    const kept = keepStreamSlots(slots, held, 90, () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    kept.stop();
    const rounds = renewals.length / 3;
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(new Set(renewals.map((renewal) => renewal.pool)).size).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(renewals.length / 3).toBe(rounds);
    expect(kept.lost()).toBe(false);
  });

  it('says so once a renewal finds a slot reclaimed', async () => {
    const { slots } = recordingSlots(() => false);
    const kept = keepStreamSlots(slots, held, 30, () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 60));
    kept.stop();
    expect(kept.lost()).toBe(true);
  });
});
