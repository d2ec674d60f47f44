/**
 * A stream's slots (src/relay/connection-slots.ts `takeStreamSlots`) against DynamoDB Local:
 * the tenant's share of the pool taken before the pool, and the pool spread over shards whose
 * bound is still exact.
 */
import { describe, expect, it } from 'vitest';
import { poolShardCapacities, releaseStreamSlots, takeStreamSlots } from '../../src/relay/connections/connection-slots.ts';
import type { StreamRefusal, StreamSlots } from '../../src/relay/connections/connection-slots.ts';
import { liveStreamsShard, tenantStreamsPool } from '../../src/relay/ports/index.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { dynamoClient, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';

const quotas = new QuotaStore(dynamoClient(), { tenantsTable: tableNames.tenants, connectionsTable: tableNames.connections, now: Date.now, cacheMs: 0 });
// No socket leases here: the gateway is never asked.
const slots = { quotas, now: Date.now, poster: { post: async () => 'sent' as const, close: async () => undefined, isOpen: async () => true } };
const LEASE_MS = 60_000;

function held(taken: StreamSlots | StreamRefusal): StreamSlots {
  if ('refused' in taken) throw new Error(`refused: ${taken.detail}`);
  return taken;
}

describe('stream slots', () => {
  it("refuses a tenant at its share with 'tenant-share' before it touches the pool, while another tenant still gets a slot", async () => {
    const noisy = uniqueName('share-a');
    const quiet = uniqueName('share-b');
    await tenantWithToken(noisy, ['consume']);
    await tenantWithToken(quiet, ['consume']);
    // A pool of 3 (one shard) the test has to itself: its shard numbers are past any real pool's.
    const settings = { maxLiveStreams: 3, maxStreamsPerTenant: 2, slotLeaseMs: LEASE_MS };
    const shardOf = () => 0;
    const taken = [held(await takeStreamSlots(slots, noisy, uniqueName('s'), settings, shardOf)), held(await takeStreamSlots(slots, noisy, uniqueName('s'), settings, shardOf))];
    const poolBefore = (await quotas.slotCount(liveStreamsShard(0))).count;
    const refused = await takeStreamSlots(slots, noisy, uniqueName('s'), settings, shardOf);
    expect(refused).toMatchObject({ refused: 'tenant-share' });
    expect((refused as StreamRefusal).detail).toMatch(/share of 2 concurrent streams/);
    expect((await quotas.slotCount(liveStreamsShard(0))).count).toBe(poolBefore);
    expect((await quotas.slotCount(tenantStreamsPool(noisy))).count).toBe(2);
    const other = held(await takeStreamSlots(slots, quiet, uniqueName('s'), settings, shardOf));
    for (const stream of [...taken, other]) await releaseStreamSlots(slots, stream);
    expect((await quotas.slotCount(tenantStreamsPool(noisy))).count).toBe(0);
    expect((await quotas.slotCount(liveStreamsShard(0))).count).toBe(poolBefore - 2);
  });

  it('takes a slot in another shard when the picked one is full, and refuses with pool only when every shard is full', async () => {
    const max = 101;
    expect(poolShardCapacities(max)).toEqual([34, 34, 33]);
    const settings = { maxLiveStreams: max, maxStreamsPerTenant: 0, slotLeaseMs: LEASE_MS };
    const before = await Promise.all([0, 1, 2].map(async (shard) => (await quotas.slotCount(liveStreamsShard(shard))).count));
    expect(before, 'the pool shards start empty (no other test uses a pool on the shared stack)').toEqual([0, 0, 0]);
    // Many tenants, so no tenant's connection quota is what refuses.
    const tenants = await Promise.all(Array.from({ length: 11 }, async (_, index) => {
      const tenant = uniqueName(`pool-${index}`);
      await tenantWithToken(tenant, ['consume']);
      return tenant;
    }));
    const streams: StreamSlots[] = [];
    try {
      // Every stream picks shard 0: the 35th and later overflow into shards 1 and 2.
      for (let index = 0; index < max; index += 1) streams.push(held(await takeStreamSlots(slots, tenants[index % tenants.length] as string, uniqueName('s'), settings, () => 0)));
      expect(streams.map((stream) => stream.shard).filter((shard) => shard === 0)).toHaveLength(34);
      expect(await Promise.all([0, 1, 2].map(async (shard) => (await quotas.slotCount(liveStreamsShard(shard))).count))).toEqual([34, 34, 33]);
      const refused = await takeStreamSlots(slots, tenants[0] as string, uniqueName('s'), settings, () => 2);
      expect(refused).toMatchObject({ refused: 'pool' });
      // The refused stream gave its tenant slot back.
      const tenantCounts = await Promise.all(tenants.map(async (tenant) => (await quotas.slotCount(tenant)).count));
      expect(tenantCounts.reduce((sum, count) => sum + count, 0)).toBe(max);
      // One released in shard 1 is taken again by a stream that picked the full shard 0.
      const freed = streams.find((stream) => stream.shard === 1) as StreamSlots;
      await releaseStreamSlots(slots, freed);
      streams.splice(streams.indexOf(freed), 1);
      const again = held(await takeStreamSlots(slots, tenants[0] as string, uniqueName('s'), settings, () => 0));
      streams.push(again);
      expect(again.shard).toBe(1);
    } finally {
      for (const stream of streams) await releaseStreamSlots(slots, stream);
    }
    expect(await Promise.all([0, 1, 2].map(async (shard) => (await quotas.slotCount(liveStreamsShard(shard))).count))).toEqual([0, 0, 0]);
  }, 60_000);
});
