/**
 * Token secrets: minted with 256 bits of entropy, stored only as a SHA-256 digest.
 * A digest of a high-entropy secret needs no salt or slow hash: there is nothing to guess.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'aep_';

export function mintTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
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
