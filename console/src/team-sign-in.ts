/**
 * Team sign-in from the console: the relay runs the OpenID Connect code flow (PKCE, state and
 * nonce kept server-side) and this page only carries the browser there and back. The provider
 * sends the browser back to `/console/?code=...&state=...`; the query is taken out of the
 * address bar at once (`history.replaceState`), before anything else runs, so neither the code
 * nor any token stays in a URL the browser keeps. The credential comes back in a JSON body and
 * is kept like a pasted token (`session-token.ts`).
 */
const PENDING_TENANT = 'aep-console-sign-in-tenant';
const PERSON = 'aep-console-person';

export interface SignedInPerson {
  subject: string;
  name: string;
  provider: string;
}

export type ProviderLookup = { ok: true; displayName: string } | { ok: false; detail: string };

/** The console's own address, registered at the provider as the redirect URI. */
const redirectUri = () => `${location.origin}${location.pathname}`;

export async function lookUpProvider(tenant: string): Promise<ProviderLookup> {
  const response = await fetch(`/signin/provider?tenant=${encodeURIComponent(tenant)}`, { cache: 'no-store' }).catch(() => undefined);
  if (response === undefined) return { ok: false, detail: 'The relay could not be reached; try again.' };
  const body = (await response.json().catch(() => ({}))) as { displayName?: string; detail?: string };
  if (!response.ok || typeof body.displayName !== 'string') return { ok: false, detail: body.detail ?? `Tenant ${tenant} has no identity provider set.` };
  return { ok: true, displayName: body.displayName };
}

/** Asks the relay for the provider's authorization URL and goes there. */
export async function startSignIn(tenant: string): Promise<string | undefined> {
  const response = await fetch('/signin/start', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenant, redirectUri: redirectUri() }), cache: 'no-store' }).catch(() => undefined);
  if (response === undefined) return 'The relay could not be reached; try again.';
  const body = (await response.json().catch(() => ({}))) as { authorizationUrl?: string; detail?: string };
  if (!response.ok || typeof body.authorizationUrl !== 'string') return body.detail ?? 'The relay could not start the sign-in.';
  sessionStorage.setItem(PENDING_TENANT, tenant);
  location.assign(body.authorizationUrl);
  return undefined;
}

export type Callback = { kind: 'none' } | { kind: 'signed-in'; token: string; person: SignedInPerson } | { kind: 'refused'; detail: string };

/**
 * Finishes a sign-in the provider sent the browser back from. Reads and removes the query first
 * thing (called once, before the first render).
 */
export async function finishSignIn(): Promise<Callback> {
  const params = new URLSearchParams(location.search);
  if (!params.has('state') || (!params.has('code') && !params.has('error'))) return { kind: 'none' };
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  const tenant = sessionStorage.getItem(PENDING_TENANT);
  sessionStorage.removeItem(PENDING_TENANT);
  if (params.has('error')) return { kind: 'refused', detail: `The identity provider answered ${params.get('error')}${params.has('error_description') ? `: ${params.get('error_description')}` : ''}.` };
  if (tenant === null) return { kind: 'refused', detail: 'This sign-in was not started in this tab; start again.' };
  const response = await fetch('/signin/finish', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenant, code: params.get('code'), state: params.get('state'), ...(params.has('iss') ? { iss: params.get('iss') } : {}) }),
    cache: 'no-store',
  }).catch(() => undefined);
  if (response === undefined) return { kind: 'refused', detail: 'The relay could not be reached; try again.' };
  const body = (await response.json().catch(() => ({}))) as { token?: string; person?: SignedInPerson; detail?: string };
  if (!response.ok || typeof body.token !== 'string' || body.person === undefined) return { kind: 'refused', detail: body.detail ?? `The relay refused the sign-in (HTTP ${response.status}).` };
  sessionStorage.setItem(PERSON, JSON.stringify(body.person));
  return { kind: 'signed-in', token: body.token, person: body.person };
}

/** The person signed in in this tab, when a team sign-in issued the token. */
export function signedInPerson(): SignedInPerson | undefined {
  const stored = sessionStorage.getItem(PERSON);
  return stored === null ? undefined : (JSON.parse(stored) as SignedInPerson);
}

/** Revokes a team sign-in's credential at the relay (its sockets and streams end) and forgets the person. */
export async function signOutPerson(token: string): Promise<void> {
  if (signedInPerson() === undefined) return;
  sessionStorage.removeItem(PERSON);
  await fetch('/signin/signout', { method: 'POST', headers: { authorization: `Bearer ${token}` }, cache: 'no-store' }).catch(() => undefined);
}
