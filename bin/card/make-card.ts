/**
 * Makes an identity card (AEP-0003 §8.3) in the form the relay verifies
 * (`src/relay/identity/identity-card.ts`): used by `npm run card` and by the tests, so the
 * worked example in docs/security-and-isolation.md and the tests sign the same way. Signing is `jose`'s.
 */
import { CompactSign, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';

export interface CardClaims {
  agent: string;
  operator: string;
  accepts: string[];
  /** RFC 3339. */
  valid_until: string;
  /** The tenants the card is for (RFC 7519 §4.1.3): the relay takes it only for a tenant it names. */
  aud?: string | string[];
  endpoints?: unknown;
  /** A2A AgentCard members may ride along; the relay ignores them. */
  [member: string]: unknown;
}

/** The protected header's `alg` for a private JWK (ES256 for P-256, EdDSA for Ed25519). */
export function algorithmOf(jwk: JWK): string {
  if (jwk.alg !== undefined) return jwk.alg;
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  throw new Error(`no default algorithm for a ${jwk.kty}/${jwk.crv ?? ''} key; set "alg" in the JWK`);
}

/** A compact JWS over the card's JSON text; `detached` gives `{ jws: "h..s", payload }` instead. */
export async function signCard(claims: CardClaims, key: CryptoKey, options: { alg: string; kid?: string; detached?: boolean }): Promise<string | { jws: string; payload: string }> {
  const payload = JSON.stringify(claims);
  const jws = await new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: options.alg, typ: 'aep-card+jws', ...(options.kid === undefined ? {} : { kid: options.kid }) }).sign(key);
  if (options.detached !== true) return jws;
  const [header, , signature] = jws.split('.');
  return { jws: `${header}..${signature}`, payload };
}

/** The public JWKS to register for a private JWK: the private members dropped, `alg` and `use` stated. */
export function publicJwksOf(privateJwk: JWK): { keys: JWK[] } {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, k: _k, key_ops: _ops, ext: _ext, ...publicMembers } = privateJwk;
  return { keys: [{ ...publicMembers, alg: algorithmOf(privateJwk), use: 'sig' }] };
}

/** Imports a private JWK for signing. */
export async function signingKeyOf(privateJwk: JWK): Promise<CryptoKey> {
  return (await importJWK(privateJwk, algorithmOf(privateJwk))) as CryptoKey;
}
