/**
 * Resolving a token is one strongly consistent read (1 read unit) and still sees its tenant
 * disabled at once: the lookup carries the tenant's flag, updated before the disable returns.
 */
import { describe, expect, it } from 'vitest';
import { hashTokenSecret, mintTokenSecret } from '../../src/auth/token-secret.ts';
import { CapacityMeter } from '../../src/store/capacity-meter.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { dynamoClient, mintId, tableNames, uniqueName } from '../support/relay-fixtures.ts';

describe('token resolution', () => {
  it('costs one read unit, and follows the tenant being disabled and enabled again', async () => {
    const meter = new CapacityMeter();
    const { tenants, tokens } = tenantTableStores(dynamoClient(meter), tableNames.tenants, Date.now);
    const tenant = uniqueName('t');
    await tenants.ensureTenant(tenant);
    const digest = hashTokenSecret(mintTokenSecret());
    await tokens.putToken({ tenant, tokenId: `tok-${mintId().toLowerCase()}`, scopes: ['emit'] }, digest);
    meter.reset();
    expect(await tokens.resolve(digest)).toMatchObject({ tenant, scopes: ['emit'] });
    expect(meter.snapshot()).toMatchObject({ readUnits: 1, calls: 1 });
    expect(await tenants.setTenantDisabled(tenant, true)).toBe(true);
    expect(await tokens.resolve(digest)).toBeUndefined();
    expect(await tenants.setTenantDisabled(tenant, false)).toBe(true);
    expect(await tokens.resolve(digest)).toMatchObject({ tenant });
  });

  it('issues a token of a disabled tenant disabled', async () => {
    const { tenants, tokens } = tenantTableStores(dynamoClient(), tableNames.tenants, Date.now);
    const tenant = uniqueName('t');
    await tenants.ensureTenant(tenant);
    await tenants.setTenantDisabled(tenant, true);
    const digest = hashTokenSecret(mintTokenSecret());
    await tokens.putToken({ tenant, tokenId: `tok-${mintId().toLowerCase()}`, scopes: ['emit'] }, digest);
    expect(await tokens.resolve(digest)).toBeUndefined();
    await tenants.setTenantDisabled(tenant, false);
    expect(await tokens.resolve(digest)).toMatchObject({ tenant });
  });
});
