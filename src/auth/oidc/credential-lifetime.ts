/**
 * How long a relay credential issued at sign-in lives: never past the ID token's own expiry
 * (the provider's statement of how long its word holds), never past the tenant's maximum. A
 * person removed from a mapped group keeps access until then at the latest (docs/team-sign-in.md).
 */
export function credentialExpiresAtMs(nowMs: number, idTokenExpiresAtSeconds: number, maxCredentialSeconds: number): number {
  return Math.min(idTokenExpiresAtSeconds * 1000, nowMs + maxCredentialSeconds * 1000);
}
