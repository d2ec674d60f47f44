import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { publicJwksOf, signCard } from '../../../bin/card/make-card.ts';
import type { CardClaims } from '../../../bin/card/make-card.ts';
import { verifyCard } from '../../../src/relay/identity/identity-card.ts';
import type { CardContext } from '../../../src/relay/identity/identity-card.ts';
import { parseKeySet } from '../../../src/relay/identity/key-sets.ts';
import { OperatorKeyCache } from '../../../src/relay/identity/operator-keys.ts';
import type { TrustedOperator } from '../../../src/relay/ports/operators.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const TENANT = 'acme-corp';
const DAY_MS = 86_400_000;

interface Signer {
  privateKey: CryptoKey;
  alg: string;
  kid: string;
  jwks: { keys: JWK[] };
}

async function signer(alg: 'ES256' | 'EdDSA', kid: string): Promise<Signer> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg, kid };
  return { privateKey, alg, kid, jwks: publicJwksOf(jwk) };
}

function claims(overrides: Partial<CardClaims> = {}): CardClaims {
  return { agent: 'worker', operator: 'acme', accepts: ['control.cancel', 'control.pause'], valid_until: '2030-01-01T01:00:00Z', aud: TENANT, endpoints: [], ...overrides };
}

function contextFor(registered: Record<string, Signer>, overrides: Partial<CardContext> = {}): CardContext {
  const operators = new Map(Object.entries(registered).map(([name, key]): [string, TrustedOperator] => [name, { name, jwks: JSON.stringify(key.jwks), updatedAtMs: 0 }]));
  const cache = new OperatorKeyCache(async () => ({ ok: false, reason: 'no fetches here' }), () => NOW);
  return {
    agent: 'worker',
    declaredAccepts: ['control.cancel'],
    nowMs: NOW,
    operatorNamed: async (name) => operators.get(name),
    keysOf: (operator) => cache.keysOf(operator),
    tenant: TENANT,
    maxLifetimeMs: DAY_MS,
    ...overrides,
  };
}

/** A card signed with a protected header of the test's choosing (`npm run card` always writes `typ: aep-card+jws`). */
function signWithHeader(claimsToSign: CardClaims, key: Signer, header: Record<string, unknown>): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claimsToSign))).setProtectedHeader({ alg: key.alg, kid: key.kid, ...header }).sign(key.privateKey);
}

describe.each(['ES256', 'EdDSA'] as const)('identity cards signed with %s', (alg) => {
  it('verifies a valid compact card and names its operator and valid_until', async () => {
    const acme = await signer(alg, 'acme-1');
    const card = await signCard(claims(), acme.privateKey, { alg: acme.alg, kid: acme.kid });
    expect(await verifyCard(card, contextFor({ acme }))).toEqual({ ok: true, verification: { operator: 'acme', key: expect.stringMatching(/^[\w-]{43}$/), untilMs: Date.parse('2030-01-01T01:00:00Z') } });
  });

  it('verifies a detached card (payload beside the signature) and refuses one whose payload was changed', async () => {
    const acme = await signer(alg, 'acme-1');
    const card = (await signCard(claims(), acme.privateKey, { alg: acme.alg, kid: acme.kid, detached: true })) as { jws: string; payload: string };
    expect((await verifyCard(card, contextFor({ acme }))).ok).toBe(true);
    const tampered = { ...card, payload: card.payload.replace('"worker"', '"worker" ') };
    expect(await verifyCard(tampered, contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('signature does not verify') });
  });

  it('refuses a card signed by a key that is not the named operator’s', async () => {
    const acme = await signer(alg, 'acme-1');
    const intruder = await signer(alg, 'acme-1');
    const card = await signCard(claims(), intruder.privateKey, { alg: intruder.alg, kid: intruder.kid });
    expect(await verifyCard(card, contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('signature does not verify under operator "acme"') });
  });

  it('refuses a card for another agent, an expired one, and one whose accepts does not cover the declaration', async () => {
    const acme = await signer(alg, 'acme-1');
    const sign = (overrides: Partial<CardClaims>) => signCard(claims(overrides), acme.privateKey, { alg: acme.alg, kid: acme.kid });
    expect(await verifyCard(await sign({ agent: 'other' }), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('"agent" "other" is not the hello\'s identity.agent "worker"') });
    expect(await verifyCard(await sign({ valid_until: '2029-12-31T23:59:59Z' }), contextFor({ acme }))).toMatchObject({ ok: false, reason: 'it expired at 2029-12-31T23:59:59Z' });
    expect(await verifyCard(await sign({ accepts: ['control.pause'] }), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('control.accepts "control.cancel"') });
  });

  it('refuses a card without an audience, or for another tenant, and takes one whose aud array names this tenant', async () => {
    const acme = await signer(alg, 'acme-1');
    const sign = (overrides: Partial<CardClaims>) => signCard(claims(overrides), acme.privateKey, { alg: acme.alg, kid: acme.kid });
    expect(await verifyCard(await sign({ aud: undefined }), contextFor({ acme }))).toMatchObject({ ok: false, reason: 'it has no "aud" (a string or an array of strings) naming this tenant "acme-corp"' });
    expect(await verifyCard(await sign({ aud: 'victim' }), contextFor({ acme }))).toMatchObject({ ok: false, reason: 'its "aud" "victim" does not name this tenant "acme-corp"' });
    expect(await verifyCard(await sign({ aud: ['victim', 'other'] }), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('does not name this tenant') });
    expect(await verifyCard(await sign({ aud: [TENANT, 42] as unknown as string[] }), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('has no "aud"') });
    expect((await verifyCard(await sign({ aud: ['https://relay.example', TENANT] }), contextFor({ acme }))).ok).toBe(true);
  });

  it('refuses a card whose protected header names another type, and takes the card type however it is written', async () => {
    const acme = await signer(alg, 'acme-1');
    expect(await verifyCard(await signWithHeader(claims(), acme, { typ: 'JWT' }), contextFor({ acme }))).toMatchObject({ ok: false, reason: 'its protected header\'s "typ" is "JWT", not "aep-card+jws"' });
    expect(await verifyCard(await signWithHeader(claims(), acme, {}), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('"typ" is null') });
    // RFC 7515 §4.1.9: a media type, compared case-insensitively, `application/` implied.
    for (const typ of ['AEP-Card+JWS', 'application/aep-card+jws']) expect((await verifyCard(await signWithHeader(claims(), acme, { typ }), contextFor({ acme }))).ok).toBe(true);
  });

  it('refuses a card valid further ahead than the tenant takes (a day unless its policy says less)', async () => {
    const acme = await signer(alg, 'acme-1');
    const sign = (overrides: Partial<CardClaims>) => signCard(claims(overrides), acme.privateKey, { alg: acme.alg, kid: acme.kid });
    expect(await verifyCard(await sign({ valid_until: '9999-12-31T23:59:59Z' }), contextFor({ acme }))).toMatchObject({ ok: false, reason: expect.stringContaining('cards valid for at most 86400 s') });
    expect(await verifyCard(await sign({ valid_until: new Date(NOW + DAY_MS + 1000).toISOString() }), contextFor({ acme }))).toMatchObject({ ok: false });
    expect((await verifyCard(await sign({ valid_until: new Date(NOW + DAY_MS).toISOString() }), contextFor({ acme }))).ok).toBe(true);
    expect(await verifyCard(await sign({}), contextFor({ acme }, { maxLifetimeMs: 600_000 }))).toMatchObject({ ok: false, reason: expect.stringContaining('at most 600 s') });
  });

  it('refuses a card of an operator the tenant does not trust, and one of another operator than the token is bound to', async () => {
    const acme = await signer(alg, 'acme-1');
    const beta = await signer(alg, 'beta-1');
    const betaCard = await signCard(claims({ operator: 'beta' }), beta.privateKey, { alg: beta.alg, kid: beta.kid });
    expect(await verifyCard(betaCard, contextFor({ acme }))).toMatchObject({ ok: false, reason: 'operator "beta" is not one this tenant trusts' });
    expect(await verifyCard(betaCard, contextFor({ acme, beta }, { boundOperator: 'acme' }))).toMatchObject({ ok: false, reason: expect.stringContaining('bound to operator "acme"') });
    expect((await verifyCard(betaCard, contextFor({ acme, beta }, { boundOperator: 'beta' }))).ok).toBe(true);
  });
});

describe('card forms and key sets', () => {
  it('refuses what is not a card, naming the form it expects', async () => {
    const context = contextFor({});
    expect(await verifyCard(42, context)).toMatchObject({ ok: false, reason: expect.stringContaining('compact JWS string or a detached') });
    expect(await verifyCard('a.b', context)).toMatchObject({ ok: false, reason: expect.stringContaining('not a compact JWS') });
    expect(await verifyCard('e30..c2ln', context)).toMatchObject({ ok: false, reason: expect.stringContaining('detached') });
  });

  it('refuses a key set holding a private key, or none', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    expect(parseKeySet({ keys: [await exportJWK(privateKey)] })).toMatchObject({ ok: false, reason: expect.stringContaining('private member "d"') });
    expect(parseKeySet({ keys: [] })).toMatchObject({ ok: false });
  });

  it('keeps a fetched key set for its max-age within 60 s and 1 h, and a failure for 10 s', async () => {
    let now = NOW;
    const answers: Array<{ ok: true; body: string; maxAgeSeconds?: number } | { ok: false; reason: string }> = [];
    let fetches = 0;
    const cache = new OperatorKeyCache(async () => {
      fetches += 1;
      return answers.shift() ?? { ok: false, reason: 'nothing left' };
    }, () => now);
    const acme = await signer('ES256', 'acme-1');
    const operator: TrustedOperator = { name: 'acme', jwksUrl: 'https://keys.example/jwks.json', updatedAtMs: 0 };
    answers.push({ ok: true, body: JSON.stringify(acme.jwks), maxAgeSeconds: 7 * 86_400 });
    expect((await cache.keysOf(operator)).ok).toBe(true);
    now += 3599_000;
    expect((await cache.keysOf(operator)).ok).toBe(true);
    expect(fetches).toBe(1);
    now += 2000;
    answers.push({ ok: false, reason: 'the key set URL answered 503' });
    expect(await cache.keysOf(operator)).toEqual({ ok: false, reason: 'its key set could not be fetched: the key set URL answered 503' });
    now += 9000;
    expect((await cache.keysOf(operator)).ok).toBe(false);
    expect(fetches).toBe(2);
    now += 2000;
    answers.push({ ok: true, body: JSON.stringify(acme.jwks), maxAgeSeconds: 5 });
    expect((await cache.keysOf(operator)).ok).toBe(true);
    now += 59_000;
    expect((await cache.keysOf(operator)).ok).toBe(true);
    expect(fetches).toBe(3);
  });
});
