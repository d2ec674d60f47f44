/** A verified standing holds only while its operator, and the key that verified the card, are still trusted. */
import { exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { publicJwksOf, signCard } from '../../../bin/card/make-card.ts';
import { verifyCard } from '../../../src/relay/identity/identity-card.ts';
import { OperatorKeyCache } from '../../../src/relay/identity/operator-keys.ts';
import { STANDING_RECHECK_MS, StandingCheck } from '../../../src/relay/identity/standing-check.ts';
import type { VerifiedStanding } from '../../../src/relay/domain/verified-standing.ts';
import type { OperatorsPort, TrustedOperator } from '../../../src/relay/ports/operators.ts';

const TENANT = 'acme-corp';
const START = Date.parse('2030-01-01T00:00:00Z');

async function operatorKey(alg: 'ES256' | 'EdDSA', kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: publicJwksOf({ ...(await exportJWK(privateKey)), alg, kid }).keys[0] as JWK };
}

/** `TENANT`'s operators in memory, as the admin routes would leave them; other tenants trust none. */
function operatorsInMemory(): OperatorsPort & { trust(name: string, keys: JWK[]): void } {
  const operators = new Map<string, TrustedOperator>();
  return {
    trust: (name, keys) => operators.set(name, { name, jwks: JSON.stringify({ keys }), updatedAtMs: 0 }),
    listOperators: async () => [...operators.values()],
    getOperator: async (tenant, name) => (tenant === TENANT ? operators.get(name) : undefined),
    putOperator: async (_tenant, operator) => void operators.set(operator.name, operator),
    deleteOperator: async (_tenant, name) => operators.delete(name),
  };
}

describe.each(['ES256', 'EdDSA'] as const)('verified standing (%s)', (alg) => {
  async function setUp() {
    let now = START;
    const clock = () => now;
    const operators = operatorsInMemory();
    const keys = new OperatorKeyCache(async () => ({ ok: false, reason: 'inline keys only' }), clock);
    const first = await operatorKey(alg, 'acme-1');
    operators.trust('acme', [first.jwk]);
    const card = await signCard({ agent: 'worker', operator: 'acme', accepts: [], valid_until: new Date(START + 3_600_000).toISOString(), aud: TENANT }, first.privateKey, { alg, kid: 'acme-1' });
    const outcome = await verifyCard(card, { agent: 'worker', declaredAccepts: [], nowMs: now, operatorNamed: (name) => operators.getOperator(TENANT, name), keysOf: (operator) => keys.keysOf(operator), tenant: TENANT, maxLifetimeMs: 86_400_000 });
    if (!outcome.ok) throw new Error(outcome.reason);
    return { operators, first, standing: outcome.verification as VerifiedStanding, standings: new StandingCheck({ operators, keys, now: clock }), advance: (ms: number) => void (now += ms) };
  }

  it('ends when the operator is removed, within the recheck period', async () => {
    const { operators, standing, standings, advance } = await setUp();
    expect(await standings.holds(TENANT, standing)).toBe(true);
    await operators.deleteOperator(TENANT, 'acme');
    // The process's last look stands until the period is over, and not a moment longer.
    advance(STANDING_RECHECK_MS - 1);
    expect(await standings.holds(TENANT, standing)).toBe(true);
    advance(1);
    expect(await standings.holds(TENANT, standing)).toBe(false);
  });

  it('ends when the key that verified the card is rotated out, and holds while the operator keeps it', async () => {
    const { operators, first, standing, standings, advance } = await setUp();
    const second = await operatorKey(alg, 'acme-2');
    operators.trust('acme', [first.jwk, second.jwk]);
    advance(STANDING_RECHECK_MS);
    expect(await standings.holds(TENANT, standing)).toBe(true);
    operators.trust('acme', [second.jwk]);
    advance(STANDING_RECHECK_MS);
    expect(await standings.holds(TENANT, standing)).toBe(false);
  });

  it('ends at the card’s valid_until whatever the operator, and is never a standing of another tenant', async () => {
    const { standing, standings, advance } = await setUp();
    expect(await standings.holds('other-tenant', standing)).toBe(false);
    expect(await standings.holds(TENANT, undefined)).toBe(false);
    advance(3_600_000);
    expect(await standings.holds(TENANT, standing)).toBe(false);
  });
});
