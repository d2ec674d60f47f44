/**
 * The never-log-a-token rule (AEP-0003 §8.1: the `access_token` query value MUST NOT be
 * logged), enforced where a log line is serialised rather than trusted to every caller.
 * `redactSecrets` is a JSON replacer: it sees every key and value of a line at every depth,
 * including the name, message, stack and cause of a serialised error, so a token that
 * reaches a log field by any route (an error message quoting a URL, a header map passed
 * as a field) is masked before the line is written.
 */

export const REDACTED = '[redacted]';

/**
 * Field names whose value is a credential whatever it looks like: `authorization`,
 * `x-aep-authorization` (the edge's copy of the header), `access_token`, and anything
 * ending in token, secret, password or cookie. `tokenId` is a public name, not a secret.
 */
const SECRET_FIELD = /(?:authorization|token|secret|password|cookie)s?$/i;

/** Credentials inside free text, each replaced keeping the part that says what was there. */
const SECRET_TEXT: ReadonlyArray<readonly [RegExp, string]> = [
  // A token secret as minted by src/auth/token-secret.ts: `aep_` and 43 base64url characters.
  [/aep_[A-Za-z0-9_-]{20,}/g, `aep_${REDACTED}`],
  // The query parameter browsers use (AEP-0003 §8.1), raw or percent-encoded.
  [/(access_token(?:=|%3D))[^&#\s"'<>]*/gi, `$1${REDACTED}`],
  // An Authorization header value quoted in text; long enough not to match prose ("bearer token").
  [/(bearer\s+)[A-Za-z0-9._~+/=-]{12,}/gi, `$1${REDACTED}`],
];

export function redactText(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of SECRET_TEXT) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/** A `JSON.stringify` replacer that masks credential fields and credentials inside strings. */
export function redactSecrets(key: string, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (key !== '' && SECRET_FIELD.test(key)) return REDACTED;
  if (typeof value === 'string') return redactText(value);
  return value;
}
