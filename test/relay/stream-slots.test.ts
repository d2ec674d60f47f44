import { describe, expect, it } from 'vitest';
import { MAX_POOL_SHARDS, poolShardCapacities } from '../../src/relay/connection-slots.ts';

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
