/** The relay's own ID token check, on ID tokens made here with `jose` (OpenID Connect Core §3.1.3.7). */
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkIdToken, IdTokenRefused } from '../../../src/auth/oidc/id-token-check.ts';

const ISSUER = 'https://idp.example.test';
const CLIENT = 'aep-relay';
const NOW_S = 1_800_000_000;
const NOW_MS = NOW_S * 1000;

let providerKey: CryptoKey;
let strangerKey: CryptoKey;
let publishedKeys: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  const provider = await generateKeyPair('RS256', { extractable: true });
  const stranger = await generateKeyPair('RS256', { extractable: true });
  providerKey = provider.privateKey;
  strangerKey = stranger.privateKey;
  const jwk: JWK = { ...(await exportJWK(provider.publicKey)), kid: 'provider-1', alg: 'RS256', use: 'sig' };
  publishedKeys = createLocalJWKSet({ keys: [jwk] });
});

interface Made {
  claims?: Record<string, unknown>;
  key?: CryptoKey;
  kid?: string;
  alg?: string;
}

function idToken({ claims = {}, key = providerKey, kid = 'provider-1', alg = 'RS256' }: Made = {}): Promise<string> {
  return new SignJWT({ nonce: 'n-1', name: 'Dana', groups: ['agent-ops'], ...claims })
    .setProtectedHeader({ alg, kid })
    .setIssuer((claims.iss as string | undefined) ?? ISSUER)
    .setAudience((claims.aud as string | string[] | undefined) ?? CLIENT)
    .setSubject('user-1')
    .setIssuedAt((claims.iat as number | undefined) ?? NOW_S - 10)
    .setExpirationTime((claims.exp as number | undefined) ?? NOW_S + 3600)
    .sign(key);
}

const expectations = (nonce: string | undefined = 'n-1') => ({ issuer: ISSUER, clientId: CLIENT, keys: publishedKeys, nowMs: NOW_MS, ...(nonce === undefined ? {} : { nonce }) });

async function refusal(token: string, nonce?: string): Promise<string> {
  const error = await checkIdToken(token, expectations(nonce)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(IdTokenRefused);
  return (error as IdTokenRefused).reason;
}

describe('checkIdToken', () => {
  it('accepts a token of the provider for this client with the sign-in nonce, and answers its claims', async () => {
    const claims = await checkIdToken(await idToken(), expectations());
    expect(claims).toMatchObject({ sub: 'user-1', name: 'Dana', groups: ['agent-ops'], exp: NOW_S + 3600 });
  });

  it('refuses a token of another issuer', async () => {
    expect(await refusal(await idToken({ claims: { iss: 'https://evil.example.test' } }), 'n-1')).toMatch(/iss claim/);
  });

  it('refuses a token for another audience', async () => {
    expect(await refusal(await idToken({ claims: { aud: 'some-other-app' } }), 'n-1')).toMatch(/aud claim/);
  });

  it('refuses a token naming several audiences whose azp is not this relay', async () => {
    expect(await refusal(await idToken({ claims: { aud: [CLIENT, 'other'], azp: 'other' } }), 'n-1')).toMatch(/azp/);
  });

  it('refuses an expired token', async () => {
    expect(await refusal(await idToken({ claims: { iat: NOW_S - 7200, exp: NOW_S - 3600 } }), 'n-1')).toBe('it has expired');
  });

  it('refuses a token whose nonce is not the one the sign-in sent', async () => {
    expect(await refusal(await idToken({ claims: { nonce: 'replayed' } }), 'n-1')).toMatch(/nonce/);
  });

  it('refuses a token without a nonce when the sign-in sent one', async () => {
    expect(await refusal(await idToken({ claims: { nonce: undefined } }), 'n-1')).toMatch(/nonce/);
  });

  it('refuses a token signed with a key the provider does not publish (an unknown kid)', async () => {
    expect(await refusal(await idToken({ key: strangerKey, kid: 'stranger' }), 'n-1')).toMatch(/key the provider does not publish/);
  });

  it("refuses a token signed with another key under the provider's kid", async () => {
    expect(await refusal(await idToken({ key: strangerKey }), 'n-1')).toMatch(/signature does not verify/);
  });

  it('refuses alg none (an unsecured JWT)', async () => {
    const unsecured = new UnsecuredJWT({ nonce: 'n-1' }).setIssuer(ISSUER).setAudience(CLIENT).setSubject('user-1').setIssuedAt(NOW_S - 10).setExpirationTime(NOW_S + 3600).encode();
    expect(await refusal(unsecured, 'n-1')).toMatch(/algorithm is not allowed|not a well-formed/);
  });

  it('refuses an HMAC-signed token (a shared secret is not the provider key)', async () => {
    const secret = new TextEncoder().encode('a-client-secret-of-thirty-two-bytes!!');
    const hmac = await new SignJWT({ nonce: 'n-1' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(ISSUER).setAudience(CLIENT).setSubject('user-1').setIssuedAt(NOW_S - 10).setExpirationTime(NOW_S + 3600).sign(secret);
    expect(await refusal(hmac, 'n-1')).toMatch(/algorithm is not allowed/);
  });

  it('refuses what is not a JWT at all', async () => {
    expect(await refusal('not.a.jwt', 'n-1')).toMatch(/well-formed|could not be verified/);
  });

  it('takes a token without a nonce on the device grant, which sends none', async () => {
    const claims = await checkIdToken(await idToken({ claims: { nonce: undefined } }), { issuer: ISSUER, clientId: CLIENT, keys: publishedKeys, nowMs: NOW_MS });
    expect(claims.sub).toBe('user-1');
  });
});
