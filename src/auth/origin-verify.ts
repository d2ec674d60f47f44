/**
 * The edge's proof of origin. CloudFront adds a secret header to every request it sends to the
 * HTTP API and the WebSocket API (an origin custom header, infra/constructs/edge.ts); the
 * handlers refuse a request without it, so the `execute-api` endpoints, which are public, answer
 * nothing to a caller who goes around CloudFront (and around any WAF on it). The stream function
 * URL needs no such header: it accepts only requests CloudFront signed (origin access control).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The header CloudFront adds; a viewer cannot set it (CloudFront's value replaces a viewer's). */
export const ORIGIN_VERIFY_HEADER = 'x-aep-origin-verify';

/**
 * Whether a request's headers carry one of the accepted secrets (more than one only while a
 * rotation switches values). Header names are matched case-insensitively (API Gateway hands
 * WebSocket handshake headers over as sent); the comparison takes the same time whatever the
 * value, so the secret cannot be guessed a character at a time.
 */
export function carriesOriginSecret(headers: Readonly<Record<string, string | undefined>> | null | undefined, secrets: readonly string[]): boolean {
  const given = headerValue(headers ?? {}, ORIGIN_VERIFY_HEADER);
  if (given === undefined) return false;
  const givenDigest = digest(given);
  // Every secret is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const secret of secrets) matched = timingSafeEqual(givenDigest, digest(secret)) || matched;
  return matched;
}

function headerValue(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
