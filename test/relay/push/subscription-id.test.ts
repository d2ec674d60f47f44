/** A push subscription's id is what an operator types after `aep-relay push delete`: it must never read as an option. */
import { describe, expect, it } from 'vitest';
import { subscriptionIdOf } from '../../../src/relay/push/push-registration.ts';

describe('a push subscription id', () => {
  it('is the same for one endpoint, differs between endpoints, and is hex (never begins with "-")', () => {
    const endpoints = Array.from({ length: 2_000 }, (_, index) => `https://push.example/send/${index}`);
    const ids = endpoints.map(subscriptionIdOf);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(endpoints.length);
    expect(subscriptionIdOf(endpoints[0] as string)).toBe(ids[0]);
  });
});
