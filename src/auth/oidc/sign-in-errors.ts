/** The refusals of team sign-in, in the relay's one error family. */
import { RelayError } from '../../errors/relay-error.ts';

/** 404: the tenant has set no identity provider (or there is no such tenant: the same answer, so tenants cannot be probed). */
export const noIdentityProvider = (tenant: string) => new RelayError('no-identity-provider', 404, `tenant ${JSON.stringify(tenant)} has no identity provider set`);
/** 400: the sign-in being finished is unknown, used or expired. */
export const unknownSignIn = () => new RelayError('unknown-sign-in', 400, 'this sign-in is unknown, already finished or expired; start again');
/** 400: a malformed sign-in request. */
export const invalidSignIn = (detail: string) => new RelayError('invalid-request', 400, detail);
/** 401: the provider's ID token did not pass the relay's check. */
export const idTokenRefused = (reason: string) => new RelayError('id-token-refused', 401, `the identity provider's ID token was refused: ${reason}`);
/** 403: a verified person whom no role rule gives access; the detail names the tenant's rule set. */
export const noMatchingRule = (detail: string) => new RelayError('no-matching-rule', 403, detail);
/** 502: the provider could not be reached or answered with an error. */
export const providerFailed = (detail: string) => new RelayError('identity-provider-failed', 502, detail);
