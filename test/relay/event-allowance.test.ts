import { describe, expect, it } from 'vitest';
import { EventAllowance } from '../../src/relay/ingest/event-allowance.ts';

/** The counter's contract (`QuotasPort.admitEvents`): a conditional add per second that never passes the quota; it records each write. */
function counter() {
  const bySecond = new Map<string, number>();
  const writes: { count: number; admitted: boolean }[] = [];
  return {
    bySecond,
    writes,
    async admitEvents(tenant: string, count: number, perSecond: number, second: number): Promise<boolean> {
      const key = `${tenant}@${second}`;
      const held = bySecond.get(key) ?? 0;
      const admitted = held + count <= perSecond;
      if (admitted) bySecond.set(key, held + count);
      writes.push({ count, admitted });
      return admitted;
    },
  };
}

describe('event allowance', () => {
  it('never admits more than the quota in one second across instances', async () => {
    let now = 5_000;
    const shared = counter();
    const instances = [new EventAllowance(shared, () => now), new EventAllowance(shared, () => now), new EventAllowance(shared, () => now)];
    let admitted = 0;
    for (let request = 0; request < 600; request += 1) if (await instances[request % 3]!.admit('t', 1, 100)) admitted += 1;
    expect(admitted).toBeLessThanOrEqual(100);
    // What another instance claimed and left unspent is the only shortfall: one claim (a tenth) each.
    expect(admitted).toBeGreaterThanOrEqual(100 - 3 * 10);
    expect(shared.bySecond.get('t@5')).toBeLessThanOrEqual(100);
    now = 6_000;
    expect(await instances[0]!.admit('t', 1, 100)).toBe(true);
  });

  it('costs a few counter writes a second, not one per request, and refuses from memory once the quota is spent', async () => {
    let now = 0;
    const shared = counter();
    const allowance = new EventAllowance(shared, () => now);
    // 1,000 events/s on one instance, one event per request, for 3 s.
    for (let second = 0; second < 3; second += 1) {
      for (let request = 0; request < 1000; request += 1) {
        now = second * 1000 + request;
        expect(await allowance.admit('t', 1, 1000)).toBe(true);
      }
    }
    console.log(`1,000 events/s for 3 s on one instance: ${shared.writes.length} counter writes`);
    expect(shared.writes.length).toBeLessThanOrEqual(3 * 25);
    // Past the quota: at most two refused writes, then refusals cost none.
    now = 10_000;
    expect(await allowance.admit('t', 1000, 1000)).toBe(true);
    const before = shared.writes.length;
    for (let request = 0; request < 50; request += 1) expect(await allowance.admit('t', 1, 1000)).toBe(false);
    expect(shared.writes.length - before).toBeLessThanOrEqual(2);
  });

  it('refuses a batch larger than the quota without a write, and keeps tenants apart', async () => {
    const shared = counter();
    const allowance = new EventAllowance(shared, () => 0);
    expect(await allowance.admit('a', 11, 10)).toBe(false);
    expect(shared.writes).toHaveLength(0);
    expect(await allowance.admit('a', 10, 10)).toBe(true);
    expect(await allowance.admit('a', 1, 10)).toBe(false);
    expect(await allowance.admit('b', 10, 10)).toBe(true);
  });
});
