import { describe, expect, it } from 'vitest';
import { isWellFormedTokenSecret, mintTokenSecret } from '../../src/auth/token-secret.ts';
import { authenticate, requireAuthentication } from '../../src/relay/connections/authenticate.ts';
import type { TokenLookup } from '../../src/relay/ports/tokens.ts';
import { RefusedTokens } from '../../src/relay/connections/refused-tokens.ts';

describe('token shape', () => {
  it('accepts minted secrets and refuses anything else', () => {
    expect(isWellFormedTokenSecret(mintTokenSecret())).toBe(true);
    for (const bad of ['', 'aep_', 'aep_short', 'Bearer aep_0123456789', `aep_${'a'.repeat(129)}`, 'xyz_0123456789abcdef', 'aep_0123456789abcdef!', 'aep_01234567 89abcdef']) {
      expect(isWellFormedTokenSecret(bad), bad).toBe(false);
    }
  });
});

describe('refused token digests', () => {
  it('remembers a digest for the ttl, and at most capacity digests', () => {
    let now = 0;
    const refused = new RefusedTokens(() => now, 1000, 2);
    refused.remember('a');
    refused.remember('b');
    expect([refused.has('a'), refused.has('b')]).toEqual([true, true]);
    refused.remember('c');
    expect([refused.has('a'), refused.has('b'), refused.has('c')]).toEqual([false, true, true]);
    now = 1000;
    expect(refused.has('b')).toBe(false);
  });
});

describe('authentication of bad tokens', () => {
  /** Counts the lookups authentication makes (each is one DynamoDB read in the token store). */
  function authority(answer: TokenLookup) {
    const lookups: string[] = [];
    return { lookups, tokens: { lookUp: async (digest: string) => (lookups.push(digest), answer) }, refusedTokens: new RefusedTokens(() => 0) };
  }

  it('refuses no token and a malformed token without a lookup', async () => {
    const auth = authority({ refused: 'unknown' });
    expect(await authenticate(auth, { allowQueryToken: true })).toBeUndefined();
    expect(await authenticate(auth, { authorization: 'Bearer not-a-token', allowQueryToken: false })).toBeUndefined();
    expect(await authenticate(auth, { accessTokenQuery: 'aep_x', allowQueryToken: true })).toBeUndefined();
    expect(auth.lookups).toHaveLength(0);
  });

  it('looks an unknown, revoked or expired token up once, then refuses it from memory', async () => {
    for (const refused of ['unknown', 'revoked', 'expired'] as const) {
      const auth = authority({ refused });
      const token = mintTokenSecret();
      for (let attempt = 0; attempt < 5; attempt += 1) expect(await authenticate(auth, { authorization: `Bearer ${token}`, allowQueryToken: false })).toBeUndefined();
      expect(auth.lookups, refused).toHaveLength(1);
    }
  });

  it("looks a disabled tenant's token up every time, since the tenant may be enabled again", async () => {
    const auth = authority({ refused: 'disabled', tenant: 'acme' });
    const token = mintTokenSecret();
    for (let attempt = 0; attempt < 3; attempt += 1) expect(await authenticate(auth, { authorization: `Bearer ${token}`, allowQueryToken: false })).toEqual({ disabledTenant: 'acme' });
    expect(auth.lookups).toHaveLength(3);
  });

  it("answers a disabled tenant's token with a 401 naming the tenant, and every other refusal with the plain 401", () => {
    expect(() => requireAuthentication({ disabledTenant: 'acme' })).toThrow(expect.objectContaining({ code: 'unauthenticated', status: 401, detail: 'tenant acme is disabled: its tokens are refused until the operator enables it again' }));
    expect(() => requireAuthentication(undefined)).toThrow(expect.objectContaining({ code: 'unauthenticated', status: 401, detail: 'a valid bearer token is required' }));
  });
});
