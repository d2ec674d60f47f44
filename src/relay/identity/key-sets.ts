/**
 * What an operator's key set may be: a JWKS (RFC 7517 §5) of public keys only, bounded, that
 * `jose` can use. A private member (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`) refuses the whole set:
 * the relay verifies cards and never holds anything that signs them.
 */
import { createLocalJWKSet } from 'jose';
import type { JSONWebKeySet } from 'jose';

/** Keys per operator: key rotation needs two or three; far more is a mistake. */
export const MAX_OPERATOR_KEYS = 20;
/** A key set's text, inline or fetched. */
export const MAX_KEY_SET_BYTES = 64 * 1024;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const;

export type KeySetParse = { ok: true; keySet: JSONWebKeySet } | { ok: false; reason: string };

export function parseKeySet(value: unknown): KeySetParse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'a JWKS is an object { "keys": [...] }' };
  const keys = (value as Record<string, unknown>).keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_OPERATOR_KEYS) return { ok: false, reason: `"keys" is an array of 1 to ${MAX_OPERATOR_KEYS} public keys` };
  for (const [index, key] of keys.entries()) {
    if (typeof key !== 'object' || key === null || Array.isArray(key) || typeof (key as Record<string, unknown>).kty !== 'string') return { ok: false, reason: `key ${index} is not a JWK (it needs "kty")` };
    const secret = PRIVATE_MEMBERS.find((member) => Object.hasOwn(key, member));
    if (secret !== undefined) return { ok: false, reason: `key ${index} holds private member "${secret}": register public keys only` };
  }
  const keySet = value as JSONWebKeySet;
  try {
    createLocalJWKSet(keySet);
  } catch (error) {
    return { ok: false, reason: `not a usable JWKS (${error instanceof Error ? error.message : 'invalid'})` };
  }
  return { ok: true, keySet };
}

/** Parses key set text (inline as stored, or a fetched body). */
export function parseKeySetText(text: string): KeySetParse {
  if (Buffer.byteLength(text, 'utf8') > MAX_KEY_SET_BYTES) return { ok: false, reason: `the key set is over ${MAX_KEY_SET_BYTES} bytes` };
  try {
    return parseKeySet(JSON.parse(text));
  } catch {
    return { ok: false, reason: 'the key set is not JSON' };
  }
}
