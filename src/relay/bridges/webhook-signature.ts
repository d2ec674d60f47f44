/**
 * Webhook signatures: each delivery carries `aep-signature: t={unix seconds},v1={hex}` where
 * the hex is HMAC-SHA256 of `{t}.{body}` under the sink's secret. Receivers recompute it and
 * reject stale timestamps, so a captured delivery cannot be replayed later or altered.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'aep-signature';
/** Prefix of minted secrets, so a leaked one is recognisable in a scan. */
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes. */
export function mintWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** The `aep-signature` header value for `body` sent at `nowMs`. */
export function signatureHeader(secret: string, body: string, nowMs: number): string {
  const timestamp = Math.floor(nowMs / 1000);
  return `t=${timestamp},v1=${hmac(secret, timestamp, body)}`;
}

/** What a receiver does: true when the header is a fresh, valid signature of `body`. */
export function verifySignature(secret: string, body: string, header: string, nowMs: number, toleranceSeconds = 300): boolean {
  const parts = new Map(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isSafeInteger(timestamp) || given === undefined || Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function hmac(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}
