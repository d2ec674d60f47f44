/**
 * The relay's VAPID key pairs (RFC 8292), derived from seeds: a P-256 private key is a 32-byte
 * scalar below the curve order, so a seed's SHA-256 (hashed again in the vanishing case it is
 * out of range) is one. A seed is what Secrets Manager can generate at deploy with no custom
 * resource, and what the local stack keeps in its data folder; the same seed always gives the
 * same key, so every function derives it alone and a rotation is a new seed. The keys never
 * leave this process: only the public half is served (`GET /push/key`).
 */
import { createECDH, createHash } from 'node:crypto';

export interface VapidKeyPair {
  /** base64url of the uncompressed public point (65 bytes): the browser's `applicationServerKey`. */
  publicKey: string;
  /** base64url of the 32-byte private scalar. */
  privateKey: string;
}

const CURVE_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');
const DOMAIN = 'aep-relay vapid v1';

export function vapidKeysFromSeed(seed: string): VapidKeyPair {
  let scalar = createHash('sha256').update(`${DOMAIN}\u0000${seed}`).digest();
  for (;;) {
    const value = BigInt(`0x${scalar.toString('hex')}`);
    if (value > 0n && value < CURVE_ORDER) break;
    scalar = createHash('sha256').update(scalar).digest();
  }
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(scalar);
  return { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey: scalar.toString('base64url') };
}
