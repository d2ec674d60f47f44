/**
 * What sign-in needs from outside: the tenant's provider settings and the sign-ins in flight
 * (stored, `src/store/identity-provider-store.ts`), and the provider itself (reached with
 * `openid-client`, `src/gateway/oidc-provider-client.ts`).
 */
import type { JWTVerifyGetKey } from 'jose';
import type { IdentityProviderSettings } from './identity-provider-settings.ts';

/** A sign-in in flight: what its finish must check, kept server-side under a digest of its handle. */
export type PendingSignIn =
  | { kind: 'code'; codeVerifier: string; nonce: string; state: string; redirectUri: string; expiresAtMs: number }
  | { kind: 'device'; deviceCode: string; intervalSeconds: number; expiresAtMs: number };

export interface IdentityProvidersPort {
  getSettings(tenant: string): Promise<IdentityProviderSettings | undefined>;
  putSettings(tenant: string, settings: IdentityProviderSettings): Promise<void>;
  /** False when the tenant had none. */
  deleteSettings(tenant: string): Promise<boolean>;
  /** Stores a sign-in in flight under `key` (a digest), kept until `expiresAtMs`. */
  putPending(tenant: string, key: string, pending: PendingSignIn): Promise<void>;
  /** The sign-in in flight, or undefined when unknown or expired. */
  getPending(tenant: string, key: string): Promise<PendingSignIn | undefined>;
  /** Removes it and answers what it was: exactly one caller gets it (single use). */
  takePending(tenant: string, key: string): Promise<PendingSignIn | undefined>;
}

/** The provider as a tenant set it, with its client secret opened (undefined: a public client). */
export interface ProviderTarget {
  issuer: string;
  clientId: string;
  clientSecret?: string;
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  expiresInSeconds: number;
  intervalSeconds: number;
}

export type DevicePoll = { status: 'pending' | 'slow-down' | 'denied' | 'expired' } | { status: 'done'; idToken: string };

export interface ProviderClientPort {
  /** The authorization request URL (code flow with PKCE, state and nonce). */
  authorizationUrl(target: ProviderTarget, request: { redirectUri: string; scope: string; state: string; nonce: string; codeChallenge: string }): Promise<string>;
  /** Redeems the code the provider sent back; answers the ID token (the library checked state, nonce and PKCE first). */
  redeemCode(target: ProviderTarget, callback: { redirectUri: string; code: string; state: string; iss?: string }, expected: { state: string; nonce: string; codeVerifier: string }): Promise<string>;
  startDevice(target: ProviderTarget, scope: string): Promise<DeviceAuthorization>;
  /** One poll of the token endpoint for a device code. */
  pollDevice(target: ProviderTarget, deviceCode: string): Promise<DevicePoll>;
  /** The provider's signing keys (its `jwks_uri`), for the relay's own ID token check. */
  keysOf(target: ProviderTarget): Promise<JWTVerifyGetKey>;
}
