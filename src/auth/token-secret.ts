/**
 * Token secrets: minted with 256 bits of entropy, stored only as a SHA-256 digest.
 * A digest of a high-entropy secret needs no salt or slow hash: there is nothing to guess.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'aep_';

export function mintTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The shape every token secret has: the prefix, then base64url characters (minted ones have
 * 43; a local stack's `AEP_DEV_TOKEN` may be another length within these bounds). Checked
 * before any lookup, so a request with a malformed token costs no read.
 */
const TOKEN_SHAPE = /^aep_[A-Za-z0-9_-]{8,128}$/;

export function isWellFormedTokenSecret(secret: string): boolean {
  return TOKEN_SHAPE.test(secret);
}

export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two digests (the lookup is by digest; this guards the final check). */
export function digestsEqual(left: string, right: string): boolean {
  const a = Buffer.from(left, 'hex');
  const b = Buffer.from(right, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
