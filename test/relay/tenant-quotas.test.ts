import { describe, expect, it } from 'vitest';
import { parseTenantQuotas } from '../../src/relay/domain/tenant-quotas.ts';

describe('tenant quotas', () => {
  it('accept positive integer members', () => {
    expect(parseTenantQuotas({ maxConnections: 5, eventsPerSecond: 100 })).toEqual({ ok: true, quotas: { maxConnections: 5, eventsPerSecond: 100 } });
  });

  it('refuse unknown members and non-positive or fractional values', () => {
    for (const bad of [{ maxConnections: 0 }, { maxConnections: 1.5 }, { eventsPerSecond: '10' }, { colours: 3 }, null, []]) {
      expect(parseTenantQuotas(bad).ok, JSON.stringify(bad)).toBe(false);
    }
  });
});
