/**
 * Tenant ids appear in every storage key the relay writes, so they are restricted to a
 * separator-free alphabet: `[a-z0-9-]`, 1 to 40 characters, starting and ending alphanumeric.
 */
export const TENANT_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && TENANT_ID_PATTERN.test(value);
}
