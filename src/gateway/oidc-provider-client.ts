/**
 * The tenants' OpenID Connect providers, reached with `openid-client` (discovery, the
 * authorization code grant with PKCE, state and nonce, the device authorization grant of
 * RFC 8628) and `jose` (the provider's key set), every request through the guarded fetch
 * (`guarded-fetch.ts`): no OAuth or JWT code of our own. Discovery answers are kept per issuer
 * and client for a few minutes in this process.
 */
import { createRemoteJWKSet, customFetch as joseCustomFetch } from 'jose';
import type { JWTVerifyGetKey } from 'jose';
import * as client from 'openid-client';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import type { DeviceAuthorization, DevicePoll, ProviderClientPort, ProviderTarget } from '../auth/oidc/sign-in-ports.ts';
import { guardedFetch } from './guarded-fetch.ts';

const DISCOVERY_CACHE_MS = 5 * 60_000;
const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export function oidcProviderClient(options: { addresses: AddressRule; now: () => number }): ProviderClientPort {
  const fetchGuarded = guardedFetch({ addresses: options.addresses });
  const configurations = new Map<string, { config: client.Configuration; atMs: number }>();
  const keySets = new Map<string, JWTVerifyGetKey>();

  const configurationOf = async (target: ProviderTarget): Promise<client.Configuration> => {
    const cacheKey = JSON.stringify([target.issuer, target.clientId, target.clientSecret !== undefined]);
    const cached = configurations.get(cacheKey);
    if (cached !== undefined && options.now() - cached.atMs < DISCOVERY_CACHE_MS) return withSecret(cached.config, target);
    const issuer = new URL(target.issuer);
    const config = await client.discovery(issuer, target.clientId, undefined, authOf(target), {
      [client.customFetch]: fetchGuarded as never,
      // Plain http only where the address rule allows loopback (the local stack's dev provider).
      ...(issuer.protocol === 'http:' && options.addresses.allowLoopback ? { execute: [client.allowInsecureRequests] } : {}),
    });
    config[client.customFetch] = fetchGuarded as never;
    if (configurations.size > 500) configurations.clear();
    configurations.set(cacheKey, { config, atMs: options.now() });
    return config;
  };

  // The secret is not cached with the configuration: a cached one is rebuilt with the current secret.
  const withSecret = (config: client.Configuration, target: ProviderTarget): client.Configuration => {
    const rebuilt = new client.Configuration(config.serverMetadata(), target.clientId, undefined, authOf(target));
    rebuilt[client.customFetch] = fetchGuarded as never;
    if (new URL(target.issuer).protocol === 'http:' && options.addresses.allowLoopback) client.allowInsecureRequests(rebuilt);
    return rebuilt;
  };

  return {
    async authorizationUrl(target, request) {
      const config = await configurationOf(target);
      return client
        .buildAuthorizationUrl(config, {
          redirect_uri: request.redirectUri,
          scope: request.scope,
          state: request.state,
          nonce: request.nonce,
          code_challenge: request.codeChallenge,
          code_challenge_method: 'S256',
          response_type: 'code',
        })
        .toString();
    },

    async redeemCode(target, callback, expected) {
      const config = await configurationOf(target);
      const currentUrl = new URL(callback.redirectUri);
      currentUrl.searchParams.set('code', callback.code);
      currentUrl.searchParams.set('state', callback.state);
      if (callback.iss !== undefined) currentUrl.searchParams.set('iss', callback.iss);
      const tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
      if (tokens.id_token === undefined) throw new Error('the provider answered without an ID token');
      return tokens.id_token;
    },

    async startDevice(target, scope): Promise<DeviceAuthorization> {
      const config = await configurationOf(target);
      const answer = await client.initiateDeviceAuthorization(config, { scope });
      return {
        deviceCode: answer.device_code,
        userCode: answer.user_code,
        verificationUri: answer.verification_uri,
        ...(answer.verification_uri_complete === undefined ? {} : { verificationUriComplete: answer.verification_uri_complete }),
        expiresInSeconds: answer.expires_in,
        intervalSeconds: answer.interval ?? 5,
      };
    },

    async pollDevice(target, deviceCode): Promise<DevicePoll> {
      const config = await configurationOf(target);
      try {
        const tokens = await client.genericGrantRequest(config, DEVICE_CODE_GRANT, { device_code: deviceCode });
        if (tokens.id_token === undefined) throw new Error('the provider answered without an ID token');
        return { status: 'done', idToken: tokens.id_token };
      } catch (error) {
        if (error instanceof client.ResponseBodyError) {
          if (error.error === 'authorization_pending') return { status: 'pending' };
          if (error.error === 'slow_down') return { status: 'slow-down' };
          if (error.error === 'access_denied') return { status: 'denied' };
          if (error.error === 'expired_token') return { status: 'expired' };
        }
        throw error;
      }
    },

    async keysOf(target) {
      const config = await configurationOf(target);
      const jwksUri = config.serverMetadata().jwks_uri;
      if (jwksUri === undefined) throw new Error('the provider publishes no jwks_uri');
      let keys = keySets.get(jwksUri);
      if (keys === undefined) {
        keys = createRemoteJWKSet(new URL(jwksUri), { [joseCustomFetch]: fetchGuarded as never, timeoutDuration: 5000 });
        if (keySets.size > 500) keySets.clear();
        keySets.set(jwksUri, keys);
      }
      return keys;
    },
  };
}

/** A confidential client authenticates with its secret (Basic, the default every provider takes); a public one with PKCE alone. */
function authOf(target: ProviderTarget): client.ClientAuth {
  return target.clientSecret === undefined ? client.None() : client.ClientSecretBasic(target.clientSecret);
}
