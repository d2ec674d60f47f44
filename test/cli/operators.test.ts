import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject, describe, expect, it } from 'vitest';
import { tenantWithAdmin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { testOperator } from '../support/identity-cards.ts';

describe('aep-relay operators', () => {
  it('adds, lists and removes a trusted operator over HTTP, and issues an operator-bound token', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('cli-ops');
    const env = { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: adminToken };
    const acme = await testOperator('acme', 'EdDSA', tenant);
    const file = join(mkdtempSync(join(tmpdir(), 'ops-')), 'jwks.json');
    writeFileSync(file, JSON.stringify(acme.jwks));
    const added = await cli(['operators', 'add', 'acme', '--jwks', file], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('trusting operator acme (inline keys)');
    const listed = await cli(['operators', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout)).toEqual({ operators: [expect.objectContaining({ name: 'acme', jwks: acme.jwks })] });
    const issued = await cli(['tokens', 'issue', '--scopes', 'emit', '--operator', 'acme', '--json'], env);
    expect(JSON.parse(issued.stdout)).toMatchObject({ operator: 'acme' });
    expect((await cli(['operators', 'add', 'acme'], env)).code).toBe(2);
    expect((await cli(['operators', 'remove', 'acme'], env)).code).toBe(0);
    expect(JSON.parse((await cli(['operators', 'list', '--json'], env)).stdout)).toEqual({ operators: [] });
  });
});
