/**
 * An operator as an admin registers it (`PUT /admin/operators/{name}`): `{ "jwks": {...} }`
 * (public keys inline) or `{ "jwksUrl": "https://..." }` (fetched when a card needs them).
 * The URL follows the sinks' address rules (`domain/outbound-address.ts`): https to an address
 * the deployment allows, plain http to loopback only where loopback is allowed (the local
 * stack); a name is checked again on every address it resolves to when fetched.
 */
import { disallowedAddress, isAddressLiteral } from '../domain/outbound-address.ts';
import type { AddressRule } from '../domain/outbound-address.ts';
import type { TrustedOperator } from '../ports/operators.ts';
import { parseKeySet } from './key-sets.ts';

/** Operators per tenant. */
export const MAX_OPERATORS = 50;

/** Letters, digits and `. _ : @ -`, 1 to 128, starting with a letter or digit (it is a path segment). */
export function isOperatorName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(name);
}

export type OperatorParse = { ok: true; operator: TrustedOperator } | { ok: false; reason: string };

export function parseOperatorSettings(name: string, body: unknown, addresses: AddressRule, nowMs: number): OperatorParse {
  if (!isOperatorName(name)) return { ok: false, reason: `${JSON.stringify(name.slice(0, 64))} is not an operator name: 1 to 128 of letters, digits and . _ : @ -, starting with a letter or digit` };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'the body is { "jwks": {...} } or { "jwksUrl": "https://..." }' };
  const record = body as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => key !== 'jwks' && key !== 'jwksUrl');
  if (unknown !== undefined) return { ok: false, reason: `unknown member ${JSON.stringify(unknown)}` };
  if ((record.jwks === undefined) === (record.jwksUrl === undefined)) return { ok: false, reason: 'give exactly one of "jwks" (inline public keys) and "jwksUrl"' };
  if (record.jwks !== undefined) {
    const parsed = parseKeySet(record.jwks);
    if (!parsed.ok) return { ok: false, reason: `"jwks": ${parsed.reason}` };
    return { ok: true, operator: { name, jwks: JSON.stringify(parsed.keySet), updatedAtMs: nowMs } };
  }
  const url = parseJwksUrl(record.jwksUrl, addresses);
  if (!url.ok) return url;
  return { ok: true, operator: { name, jwksUrl: url.url, updatedAtMs: nowMs } };
}

function parseJwksUrl(value: unknown, addresses: AddressRule): { ok: true; url: string } | { ok: false; reason: string } {
  if (typeof value !== 'string' || value.length > 2048) return { ok: false, reason: '"jwksUrl" is an https URL' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: '"jwksUrl" is not a URL' };
  }
  const refused = disallowedAddress(url.hostname, addresses);
  if (refused !== undefined) return { ok: false, reason: `"jwksUrl" names a ${refused} address, which the relay may not reach` };
  const loopback = addresses.allowLoopback && (url.hostname === 'localhost' || (isAddressLiteral(url.hostname) && disallowedAddress(url.hostname, { allowLoopback: false }) === 'loopback'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return { ok: false, reason: `"jwksUrl" must use https${addresses.allowLoopback ? ' (plain http is allowed to localhost only)' : ''}` };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: '"jwksUrl" must not carry credentials' };
  return { ok: true, url: url.toString() };
}
