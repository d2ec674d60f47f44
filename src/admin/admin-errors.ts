/** The admin surface's refusals, all in the relay's one error family. */
import { RelayError } from '../errors/relay-error.ts';

/** 400: a request the admin API cannot act on (bad tenant id, scopes, body). */
export const invalidAdminRequest = (detail: string) => new RelayError('invalid-request', 400, detail);
/** 404: no such tenant. */
export const tenantNotFound = (tenant: string) => new RelayError('not-found', 404, `no tenant ${JSON.stringify(tenant)}`);
/** 404: the tenant has no such token (a token of another tenant is not found, never forbidden). */
export const tokenNotFound = (tokenId: string) => new RelayError('not-found', 404, `no token ${JSON.stringify(tokenId)} in this tenant`);
/** 409: creating a tenant that exists. */
export const tenantExists = (tenant: string) => new RelayError('tenant-exists', 409, `tenant ${JSON.stringify(tenant)} already exists`);
/** 409: rotating a token that is revoked or expired (its replacement would be born dead). */
export const tokenInactive = (tokenId: string, status: string) => new RelayError('token-inactive', 409, `token ${JSON.stringify(tokenId)} is ${status}; issue a new one`);
/** 404: the tenant trusts no operator of that name. */
export const operatorNotFound = (name: string) => new RelayError('not-found', 404, `no trusted operator ${JSON.stringify(name.slice(0, 128))} in this tenant`);
