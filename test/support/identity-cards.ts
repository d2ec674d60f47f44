/** Operators and identity cards made in the test (AEP-0003 §8.3), signed with `jose` as `npm run card` signs. */
import { exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { publicJwksOf, signCard } from '../../bin/card/make-card.ts';
import type { CardClaims } from '../../bin/card/make-card.ts';

export interface TestOperator {
  name: string;
  alg: 'ES256' | 'EdDSA';
  kid: string;
  privateKey: CryptoKey;
  jwks: { keys: JWK[] };
  /** A card of this operator for `agent`, valid for `validForMs` (default 1 h). */
  card(agent: string, accepts: string[], options?: { validForMs?: number; overrides?: Partial<CardClaims>; detached?: boolean }): Promise<string | { jws: string; payload: string }>;
}

/** An operator whose cards are for `tenant` (their `aud`) unless a card's overrides say otherwise. */
export async function testOperator(name: string, alg: 'ES256' | 'EdDSA', tenant: string): Promise<TestOperator> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${name}-1`;
  const jwks = publicJwksOf({ ...(await exportJWK(privateKey)), alg, kid });
  return {
    name,
    alg,
    kid,
    privateKey,
    jwks,
    card: (agent, accepts, options = {}) =>
      signCard(
        { agent, operator: name, accepts, valid_until: new Date(Date.now() + (options.validForMs ?? 3_600_000)).toISOString(), aud: tenant, endpoints: [], ...options.overrides },
        privateKey,
        { alg, kid, ...(options.detached === undefined ? {} : { detached: options.detached }) },
      ),
  };
}
