/**
 * The fan-out scheduler: per-connection order, a concurrency bound over all connections, and no
 * head-of-line blocking (a connection that never answers holds one lane, nobody else).
 */
import { describe, expect, it } from 'vitest';
import { runPool } from '../../../src/relay/fanout/delivery-pool.ts';

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

  it('retries an action after its wait, keeping the connection in order, while the others run on', async () => {
    const ran: string[] = [];
    let refusals = 0;
    const started = performance.now();
    let retriedAt = 0;
    await runPool(new Map([['slow', [1, 2]], ['busy', Array.from({ length: 40 }, (_, index) => index)]]), { concurrency: 4 }, async (key, action) => {
      if (key === 'busy') {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return 'next';
      }
      ran.push(`${key}${action}`);
      if (action === 1 && refusals < 2) {
        refusals += 1;
        if (refusals === 2) retriedAt = performance.now() - started;
        return { retryInMs: 30 };
      }
      return 'next';
    });
    expect(ran).toEqual(['slow1', 'slow1', 'slow1', 'slow2']);
    // The first wait (30 ms) passed while `busy` still had work (40 actions of at least 2 ms).
    expect(retriedAt).toBeGreaterThanOrEqual(29);
  });

  it('ends a retry wait at once when nothing else is left, so one connection never holds the batch alone', async () => {
    const started = performance.now();
    let attempts = 0;
    await runPool(new Map([['slow', [1]], ['quick', [1]]]), { concurrency: 4 }, async (key) => {
      if (key === 'quick') return 'next';
      attempts += 1;
      return attempts < 3 ? { retryInMs: 10_000 } : 'next';
    });
    expect(attempts).toBe(3);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('rejects when an action throws (a bug, retried by the event source mapping)', async () => {
    await expect(runPool(new Map([['c', [1]]]), { concurrency: 1 }, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
