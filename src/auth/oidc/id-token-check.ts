/**
 * The relay's own check of an ID token (OpenID Connect Core §3.1.3.7), done with `jose` on every
 * path that issues a credential, whatever the client library already checked: the signature
 * against the provider's published keys with an asymmetric algorithm (`alg: none` and the HMAC
 * family are refused: a client secret is not the provider's key), the issuer, the audience (and
 * `azp` when there are several), the expiry and issue time, and the nonce the sign-in started
 * with. A refusal names what failed, never the token.
 */
import { errors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';

/** Asymmetric JWS algorithms an ID token may be signed with. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  /** The nonce the authorization request carried; absent for the device grant, which has none. */
  nonce?: string;
  /** The provider's keys (its `jwks_uri`, or a local set in tests). */
  keys: JWTVerifyGetKey;
  nowMs: number;
}

/** The claims of a verified ID token the relay reads. */
export interface VerifiedIdToken extends JWTPayload {
  sub: string;
  exp: number;
}

export class IdTokenRefused extends Error {
  constructor(readonly reason: string) {
    super(`the ID token was refused: ${reason}`);
    this.name = 'IdTokenRefused';
  }
}

export async function checkIdToken(idToken: string, expected: IdTokenExpectations): Promise<VerifiedIdToken> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, expected.keys, {
      issuer: expected.issuer,
      audience: expected.clientId,
      algorithms: ID_TOKEN_ALGORITHMS,
      requiredClaims: ['sub', 'exp', 'iat'],
      currentDate: new Date(expected.nowMs),
      // A minute either way for clocks that disagree; expiry still bounds the credential.
      clockTolerance: 60,
    }));
  } catch (error) {
    throw new IdTokenRefused(reasonOf(error));
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (audiences.length > 1 && payload.azp !== expected.clientId) throw new IdTokenRefused('it names several audiences and its azp is not this relay');
  if (expected.nonce !== undefined && payload.nonce !== expected.nonce) throw new IdTokenRefused('its nonce is not the one this sign-in sent');
  if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload.exp !== 'number') throw new IdTokenRefused('it has no subject or expiry');
  return payload as VerifiedIdToken;
}

function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `its ${error.claim} claim is not the expected one (${error.reason})`;
  if (error instanceof errors.JWKSNoMatchingKey) return "it is signed with a key the provider does not publish";
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its signature algorithm is not allowed (asymmetric algorithms only)';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'it is not a well-formed signed JWT';
  if (error instanceof errors.JOSENotSupported) return 'its algorithm or key type is not supported';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return "the provider's keys could not be read";
  return 'it could not be verified';
}
