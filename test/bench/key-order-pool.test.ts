/**
 * The fan-out stand-in's posting discipline (bench/clients.ts, inKeyOrder): each key's items in
 * order with at most one in flight per key, at most `concurrency` in flight in all, keys taken
 * round-robin, and no lane lost while work is left.
 */
import { describe, expect, it } from 'vitest';
import { inKeyOrder } from '../../bench/clients.ts';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('inKeyOrder', () => {
  it('posts each key in order, one in flight per key, at most the concurrency in all', async () => {
    const queues = new Map(Array.from({ length: 6 }, (_, key) => [`c${key}`, Array.from({ length: 5 }, (_, item) => item)]));
    const seen = new Map<string, number[]>();
    const inFlight = new Set<string>();
    let most = 0;
    await inKeyOrder(queues, 4, async (key, item) => {
      expect(inFlight.has(key)).toBe(false);
      inFlight.add(key);
      most = Math.max(most, inFlight.size);
      await tick();
      seen.set(key, [...(seen.get(key) ?? []), item]);
      inFlight.delete(key);
    });
    expect(most).toBe(4);
    for (const key of queues.keys()) expect(seen.get(key)).toEqual([0, 1, 2, 3, 4]);
  });

  it('takes keys round-robin: every key gets its first item before any gets its third', async () => {
    const queues = new Map(Array.from({ length: 3 }, (_, key) => [`c${key}`, [0, 1, 2]]));
    const order: string[] = [];
    await inKeyOrder(queues, 1, async (key, item) => {
      order.push(`${key}:${item}`);
      await tick();
    });
    expect(order).toEqual(['c0:0', 'c1:0', 'c2:0', 'c0:1', 'c1:1', 'c2:1', 'c0:2', 'c1:2', 'c2:2']);
  });

  it('keeps a lane on every key left when fewer keys than lanes remain', async () => {
    // Two keys, one long: the long key's items still go one after another, none skipped.
    const queues = new Map([['short', [0]], ['long', [0, 1, 2, 3, 4, 5, 6, 7]]]);
    const long: number[] = [];
    await inKeyOrder(queues, 8, async (key, item) => {
      await tick();
      if (key === 'long') long.push(item);
    });
    expect(long).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
