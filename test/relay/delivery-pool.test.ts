/**
 * The fan-out scheduler: per-connection order, a concurrency bound over all connections, and no
 * head-of-line blocking (a connection that never answers holds one lane, nobody else).
 */
import { describe, expect, it } from 'vitest';
import { runPool } from '../../src/relay/fanout/delivery-pool.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('runPool', () => {
  it('keeps each connection in order while serving connections side by side', async () => {
    const queues = new Map(Array.from({ length: 20 }, (_, connection) => [`c${connection}`, Array.from({ length: 15 }, (_, index) => index)] as const));
    const seen = new Map<string, number[]>();
    await runPool(queues, { concurrency: 7 }, async (key, index) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      seen.set(key, [...(seen.get(key) ?? []), index]);
      return 'next';
    });
    for (const [key, actions] of queues) expect(seen.get(key)).toEqual(actions);
  });

  it('never runs more than `concurrency` actions at once, nor two of one connection', async () => {
    const queues = new Map(Array.from({ length: 30 }, (_, connection) => [`c${connection}`, [1, 2, 3, 4]] as const));
    let inFlight = 0;
    let peak = 0;
    const busy = new Set<string>();
    await runPool(queues, { concurrency: 5 }, async (key) => {
      expect(busy.has(key)).toBe(false);
      busy.add(key);
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await tick();
      inFlight -= 1;
      busy.delete(key);
      return 'next';
    });
    expect(peak).toBe(5);
  });

  it('lets the others finish while one connection is stuck (no head-of-line blocking)', async () => {
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queues = new Map<string, number[]>([['slow', [1, 2, 3]], ...Array.from({ length: 50 }, (_, connection) => [`c${connection}`, [1, 2, 3]] as [string, number[]])]);
    const done = new Set<string>();
    const pool = runPool(queues, { concurrency: 4 }, async (key, action) => {
      if (key === 'slow') await stuck;
      else await tick();
      if (action === 3) done.add(key);
      return 'next';
    });
    for (let spin = 0; spin < 500 && done.size < 50; spin += 1) await tick();
    expect(done.size).toBe(50);
    expect(done.has('slow')).toBe(false);
    release();
    await pool;
    expect(done.has('slow')).toBe(true);
  });

  it('drops the rest of a connection that answers stop, and finishes on empty input', async () => {
    const ran: string[] = [];
    await runPool(new Map([['gone', [1, 2, 3]], ['fine', [1, 2]]]), { concurrency: 2 }, async (key, action) => {
      ran.push(`${key}${action}`);
      return key === 'gone' ? 'stop' : 'next';
    });
    expect(ran.sort()).toEqual(['fine1', 'fine2', 'gone1']);
    await expect(runPool(new Map(), { concurrency: 3 }, async () => 'next')).resolves.toBeUndefined();
  });

  it('serves connections round-robin, so every one gets its first action before any gets its third', async () => {
    const order: string[] = [];
    await runPool(new Map(Array.from({ length: 6 }, (_, connection) => [`c${connection}`, [1, 2, 3]] as const)), { concurrency: 2 }, async (key, action) => {
      order.push(`${key}:${action}`);
      await tick();
      return 'next';
    });
    const firstThird = order.findIndex((entry) => entry.endsWith(':3'));
    const lastFirst = Math.max(...order.map((entry, index) => (entry.endsWith(':1') ? index : -1)));
    expect(lastFirst).toBeLessThan(firstThird);
  });

  it('rejects when an action throws (a bug, retried by the event source mapping)', async () => {
    await expect(runPool(new Map([['c', [1]]]), { concurrency: 1 }, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
