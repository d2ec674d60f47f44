/**
 * Team sign-in: a person proves who they are at the tenant's OpenID Connect provider and the
 * relay issues them a short-lived relay credential (an ordinary token with an expiry, carrying
 * the person) with the grant the tenant's role rules give.
 *
 * Console: `startCodeFlow` keeps PKCE verifier, state and nonce server-side under a digest of the
 * state and answers the provider's authorization URL; `finishCodeFlow` takes the code back,
 * single use, redeems it (`openid-client` checks state, PKCE and nonce), checks the ID token
 * itself (`id-token-check.ts`) and issues. CLI: `startDevice`/`pollDevice` run the device
 * authorization grant (RFC 8628), one token-endpoint poll per CLI poll. The credential lives at
 * most until the ID token expires and at most the tenant's maximum (`credential-lifetime.ts`).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { hashTokenSecret, mintTokenSecret } from '../token-secret.ts';
import type { Scope } from '../scopes.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { SecretSealer } from '../../relay/ports/secret-sealer.ts';
import type { TokensPort } from '../../relay/ports/tokens.ts';
import { credentialExpiresAtMs } from './credential-lifetime.ts';
import { checkIdToken, IdTokenRefused } from './id-token-check.ts';
import type { IdentityProviderSettings } from './identity-provider-settings.ts';
import { boundedField } from './person.ts';
import type { Person } from './person.ts';
import { grantForClaims } from './role-rules.ts';
import type { IdentityProvidersPort, ProviderClientPort, ProviderTarget } from './sign-in-ports.ts';
import { idTokenRefused, invalidSignIn, noIdentityProvider, noMatchingRule, providerFailed, unknownSignIn } from './sign-in-errors.ts';

/** How long a started sign-in may take to finish (a person at a login page). */
export const SIGN_IN_WINDOW_MS = 10 * 60_000;
/** What the sealer binds a provider's client secret to, beside the tenant. */
export const CLIENT_SECRET_SEAL_NAME = 'identity-provider-client-secret';

export interface SignInDependencies {
  providers: IdentityProvidersPort;
  client: ProviderClientPort;
  tokens: Pick<TokensPort, 'putToken'>;
  sealer: SecretSealer;
  mintId: () => string;
  now: () => number;
}

/** A credential just issued: the one time its secret is shown. */
export interface SignedIn {
  token: string;
  tokenId: string;
  tenant: string;
  expiresAt: string;
  scopes: Scope[];
  agents?: string[];
  maxCapture: CaptureLevel;
  person: Person;
}

export interface ProviderView {
  tenant: string;
  displayName: string;
  issuer: string;
}

export type DevicePollResult = { status: 'pending' | 'slow-down'; intervalSeconds: number } | ({ status: 'signed-in' } & SignedIn);

export class SignInService {
  constructor(private readonly deps: SignInDependencies) {}

  /** What the console shows on its button ("Sign in with <displayName>"). */
  async provider(tenant: string): Promise<ProviderView> {
    const settings = await this.settingsOf(tenant);
    return { tenant, displayName: settings.displayName, issuer: settings.issuer };
  }

  async startCodeFlow(tenant: string, redirectUri: string): Promise<{ authorizationUrl: string }> {
    const settings = await this.settingsOf(tenant);
    // Only where the tenant registered: a code must never be sent to a page of someone else's.
    if (!settings.redirectUris.includes(redirectUri)) throw invalidSignIn(`redirectUri is not one of the tenant's registered redirect URIs`);
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const target = await this.targetOf(tenant, settings);
    const codeChallenge = await client.calculatePKCECodeChallenge(codeVerifier);
    const authorizationUrl = await this.provided(() => this.deps.client.authorizationUrl(target, { redirectUri, scope: scopeOf(settings), state, nonce, codeChallenge }));
    await this.deps.providers.putPending(tenant, digestOf(state), { kind: 'code', codeVerifier, nonce, state, redirectUri, expiresAtMs: this.deps.now() + SIGN_IN_WINDOW_MS });
    return { authorizationUrl };
  }

  async finishCodeFlow(tenant: string, callback: { code: string; state: string; iss?: string }): Promise<SignedIn> {
    const settings = await this.settingsOf(tenant);
    const pending = await this.deps.providers.takePending(tenant, digestOf(callback.state));
    if (pending === undefined || pending.kind !== 'code' || pending.expiresAtMs <= this.deps.now()) throw unknownSignIn();
    const target = await this.targetOf(tenant, settings);
    const idToken = await this.provided(() =>
      this.deps.client.redeemCode(target, { redirectUri: pending.redirectUri, ...callback }, { state: pending.state, nonce: pending.nonce, codeVerifier: pending.codeVerifier }),
    );
    return this.issueFor(tenant, settings, target, idToken, pending.nonce);
  }

  async startDevice(tenant: string): Promise<{ handle: string; userCode: string; verificationUri: string; verificationUriComplete?: string; expiresInSeconds: number; intervalSeconds: number }> {
    const settings = await this.settingsOf(tenant);
    const target = await this.targetOf(tenant, settings);
    const device = await this.provided(() => this.deps.client.startDevice(target, scopeOf(settings)));
    // The CLI holds a handle of the relay's, not the device code: the device code stays here.
    const handle = randomBytes(32).toString('base64url');
    const expiresAtMs = this.deps.now() + Math.min(device.expiresInSeconds * 1000, SIGN_IN_WINDOW_MS);
    await this.deps.providers.putPending(tenant, digestOf(handle), { kind: 'device', deviceCode: device.deviceCode, intervalSeconds: device.intervalSeconds, expiresAtMs });
    return {
      handle,
      userCode: device.userCode,
      verificationUri: device.verificationUri,
      ...(device.verificationUriComplete === undefined ? {} : { verificationUriComplete: device.verificationUriComplete }),
      expiresInSeconds: Math.floor((expiresAtMs - this.deps.now()) / 1000),
      intervalSeconds: device.intervalSeconds,
    };
  }

  async pollDevice(tenant: string, handle: string): Promise<DevicePollResult> {
    const settings = await this.settingsOf(tenant);
    const key = digestOf(handle);
    const pending = await this.deps.providers.getPending(tenant, key);
    if (pending === undefined || pending.kind !== 'device' || pending.expiresAtMs <= this.deps.now()) throw unknownSignIn();
    const target = await this.targetOf(tenant, settings);
    const polled = await this.provided(() => this.deps.client.pollDevice(target, pending.deviceCode));
    if (polled.status === 'pending') return { status: 'pending', intervalSeconds: pending.intervalSeconds };
    if (polled.status === 'slow-down') {
      const intervalSeconds = pending.intervalSeconds + 5;
      await this.deps.providers.putPending(tenant, key, { ...pending, intervalSeconds });
      return { status: 'slow-down', intervalSeconds };
    }
    // Done one way or the other: single use from here (a second poller finds nothing).
    if ((await this.deps.providers.takePending(tenant, key)) === undefined) throw unknownSignIn();
    if (polled.status === 'denied') throw invalidSignIn('the person declined the sign-in at the provider');
    if (polled.status !== 'done') throw unknownSignIn();
    return { status: 'signed-in', ...(await this.issueFor(tenant, settings, target, polled.idToken, undefined)) };
  }

  /** Checks the ID token, applies the role rules and issues the credential. */
  private async issueFor(tenant: string, settings: IdentityProviderSettings, target: ProviderTarget, idToken: string, nonce: string | undefined): Promise<SignedIn> {
    const keys = await this.provided(() => this.deps.client.keysOf(target));
    const now = this.deps.now();
    let claims;
    try {
      claims = await checkIdToken(idToken, { issuer: settings.issuer, clientId: settings.clientId, keys, nowMs: now, ...(nonce === undefined ? {} : { nonce }) });
    } catch (error) {
      if (error instanceof IdTokenRefused) throw idTokenRefused(error.reason);
      throw error;
    }
    const person: Person = { subject: boundedField(claims.sub), name: boundedField(nameOf(claims)), provider: boundedField(settings.displayName) };
    const verdict = grantForClaims(claims, settings.ruleSet, person.name);
    if (!verdict.ok) throw noMatchingRule(verdict.refusal);
    const expiresAtMs = credentialExpiresAtMs(now, claims.exp, settings.maxCredentialSeconds);
    if (expiresAtMs <= now) throw idTokenRefused('it has expired');
    const tokenId = `tok_${this.deps.mintId()}`;
    const token = mintTokenSecret();
    const { grant } = verdict;
    await this.deps.tokens.putToken(
      { tenant, tokenId, scopes: grant.scopes, ...(grant.agents === undefined ? {} : { agents: grant.agents }), maxCapture: grant.maxCapture, expiresAtMs, label: `sign-in: ${person.name}`, person },
      hashTokenSecret(token),
    );
    return { token, tokenId, tenant, expiresAt: new Date(expiresAtMs).toISOString(), scopes: grant.scopes, ...(grant.agents === undefined ? {} : { agents: grant.agents }), maxCapture: grant.maxCapture, person };
  }

  private async settingsOf(tenant: string): Promise<IdentityProviderSettings> {
    const settings = await this.deps.providers.getSettings(tenant);
    if (settings === undefined) throw noIdentityProvider(tenant);
    return settings;
  }

  private async targetOf(tenant: string, settings: IdentityProviderSettings): Promise<ProviderTarget> {
    const clientSecret = settings.sealedClientSecret === undefined ? undefined : await this.deps.sealer.open(settings.sealedClientSecret, { tenant, sink: CLIENT_SECRET_SEAL_NAME });
    return { issuer: settings.issuer, clientId: settings.clientId, ...(clientSecret === undefined ? {} : { clientSecret }) };
  }

  /** Runs a call to the provider; its failure becomes a 502 naming the provider's error code, never a token. */
  private async provided<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof client.ResponseBodyError) throw providerFailed(`the identity provider answered ${error.error}`);
      if (error instanceof client.AuthorizationResponseError) throw providerFailed(`the identity provider answered ${error.error}`);
      if (error instanceof Error && error.name === 'RelayError') throw error;
      throw providerFailed(`the identity provider could not be used (${whatFailed(error).slice(0, 200)})`);
    }
  }
}

/**
 * The failure and what caused it: `openid-client` wraps a failed request (a reset connection, a
 * timeout) in an error that says only "something went wrong", and the cause is what an operator acts on.
 */
function whatFailed(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

/** The scope string asked for: openid, then the tenant's. */
function scopeOf(settings: IdentityProviderSettings): string {
  return ['openid', ...settings.scopes].join(' ');
}

function nameOf(claims: Record<string, unknown>): string {
  for (const claim of ['name', 'preferred_username', 'email']) {
    const value = claims[claim];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return String(claims.sub);
}

/** Sign-ins in flight are found by a digest of their handle: a read of the table gives no live handle. */
function digestOf(handle: string): string {
  return createHash('sha256').update(handle, 'utf8').digest('hex');
}
