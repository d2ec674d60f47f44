/**
 * A tenant's OpenID Connect provider, as its admin sets it (`PUT /admin/identity-provider`):
 * where the provider is (`issuer`, whose discovery document the relay fetches under the same
 * address rules as sinks and key set URLs), who the relay is there (`clientId`, and a
 * `clientSecret` when the provider wants a confidential client: sealed before it is stored,
 * never shown again), where the console may be sent back to (`redirectUris`, as registered at
 * the provider), what to ask for (`scopes`, beside `openid`), how long a credential lives at
 * most (`maxCredentialSeconds`, default 8 h), and the role rules (`role-rules.ts`).
 */
import { disallowedAddress, isAddressLiteral } from '../../relay/domain/outbound-address.ts';
import type { AddressRule } from '../../relay/domain/outbound-address.ts';
import { parseRoleRuleSet } from './role-rules.ts';
import type { Parsed, RoleRuleSet } from './role-rules.ts';

/** A credential lives at most this long unless the tenant sets less (or more, up to the ceiling). */
export const DEFAULT_MAX_CREDENTIAL_SECONDS = 8 * 3600;
/** No tenant setting makes a credential outlive a day: removal from a group must bite. */
export const CEILING_MAX_CREDENTIAL_SECONDS = 24 * 3600;
const MAX_REDIRECT_URIS = 10;
const MAX_SCOPES = 10;

/** The settings as the relay uses them; the secret only in sealed form. */
export interface IdentityProviderSettings {
  issuer: string;
  clientId: string;
  displayName: string;
  redirectUris: readonly string[];
  /** Requested beside `openid`. */
  scopes: readonly string[];
  maxCredentialSeconds: number;
  ruleSet: RoleRuleSet;
  /** The client secret as the sealer sealed it; absent for a public client (PKCE alone). */
  sealedClientSecret?: string;
  updatedAtMs: number;
}

/** What a PUT carries: the settings, and the secret in the clear (sealed before it is stored). */
export interface IdentityProviderDocument extends Omit<IdentityProviderSettings, 'sealedClientSecret' | 'updatedAtMs'> {
  clientSecret?: string;
}

export function parseIdentityProviderDocument(document: unknown, addresses: AddressRule): Parsed<IdentityProviderDocument> {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return { ok: false, reason: 'the body is an object { issuer, clientId, clientSecret?, displayName?, redirectUris, scopes?, maxCredentialSeconds?, ruleSet }' };
  const body = document as Record<string, unknown>;
  const known = new Set(['issuer', 'clientId', 'clientSecret', 'displayName', 'redirectUris', 'scopes', 'maxCredentialSeconds', 'ruleSet']);
  const unknown = Object.keys(body).filter((key) => !known.has(key));
  if (unknown.length > 0) return { ok: false, reason: `unknown member ${unknown.join(', ')}` };
  const issuer = checkedUrl(body.issuer, 'issuer', addresses);
  if (!issuer.ok) return issuer;
  if (issuer.value.search !== '' || issuer.value.hash !== '') return { ok: false, reason: 'issuer has no query or fragment (OpenID Connect Discovery §2)' };
  if (!isText(body.clientId, 400)) return { ok: false, reason: 'clientId is the client id the provider gave the relay' };
  if (body.clientSecret !== undefined && !isText(body.clientSecret, 2000)) return { ok: false, reason: 'clientSecret, when given, is a non-empty string' };
  if (body.displayName !== undefined && !isText(body.displayName, 80)) return { ok: false, reason: 'displayName is 1 to 80 characters' };
  if (!Array.isArray(body.redirectUris) || body.redirectUris.length === 0 || body.redirectUris.length > MAX_REDIRECT_URIS) return { ok: false, reason: `redirectUris lists 1 to ${MAX_REDIRECT_URIS} console URLs registered at the provider` };
  const redirectUris: string[] = [];
  for (const candidate of body.redirectUris) {
    const checked = checkedUrl(candidate, 'a redirect URI', addresses);
    if (!checked.ok) return checked;
    if (checked.value.hash !== '' || checked.value.search !== '') return { ok: false, reason: 'a redirect URI has no query or fragment' };
    redirectUris.push(checked.value.href);
  }
  const scopes = body.scopes ?? ['profile', 'email'];
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => isText(scope, 100) && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) return { ok: false, reason: `scopes lists at most ${MAX_SCOPES} OAuth scope names (openid is always asked)` };
  const maxCredentialSeconds = body.maxCredentialSeconds ?? DEFAULT_MAX_CREDENTIAL_SECONDS;
  if (typeof maxCredentialSeconds !== 'number' || !Number.isSafeInteger(maxCredentialSeconds) || maxCredentialSeconds < 60 || maxCredentialSeconds > CEILING_MAX_CREDENTIAL_SECONDS) {
    return { ok: false, reason: `maxCredentialSeconds is a whole number from 60 to ${CEILING_MAX_CREDENTIAL_SECONDS}` };
  }
  const ruleSet = parseRoleRuleSet(body.ruleSet);
  if (!ruleSet.ok) return ruleSet;
  return {
    ok: true,
    value: {
      issuer: issuer.value.href.replace(/\/$/, ''),
      clientId: body.clientId,
      ...(body.clientSecret === undefined ? {} : { clientSecret: body.clientSecret as string }),
      displayName: (body.displayName as string | undefined) ?? issuer.value.host,
      redirectUris,
      scopes: [...new Set((scopes as string[]).filter((scope) => scope !== 'openid'))],
      maxCredentialSeconds,
      ruleSet: ruleSet.value,
    },
  };
}

/** An https URL (http only to loopback, where the rule allows it: the local stack), whose literal address the rule allows. */
function checkedUrl(value: unknown, what: string, addresses: AddressRule): Parsed<URL> {
  if (typeof value !== 'string' || value.length > 2000) return { ok: false, reason: `${what} is a URL` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: `${what} is not a URL` };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: `${what} carries no credentials` };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isAddressLiteral(host);
  const loopbackHttp = url.protocol === 'http:' && addresses.allowLoopback && (host === 'localhost' || (literal && disallowedAddress(host, { allowLoopback: false }) === 'loopback'));
  if (url.protocol !== 'https:' && !loopbackHttp) return { ok: false, reason: `${what} is an https URL` };
  if (literal) {
    const refused = disallowedAddress(host, addresses);
    if (refused !== undefined) return { ok: false, reason: `${what} names a ${refused} address, which the relay may not reach` };
  }
  return { ok: true, value: url };
}

const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value !== '' && value.length <= max;
