/**
 * `npm run card`, run as a person runs it: the card it prints is one the relay takes for the
 * tenant it names (audience, type, a lifetime inside the relay's bound).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { base64url, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CARD_MAX_LIFETIME_SECONDS } from '../../src/relay/domain/control-policy.ts';
import { verifyCard } from '../../src/relay/identity/identity-card.ts';
import { OperatorKeyCache } from '../../src/relay/identity/operator-keys.ts';
import { repoRoot } from '../support/local-stack-process.ts';

const run = promisify(execFile);
const card = (args: string[]) => run(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'bin', 'card.ts'), ...args], { cwd: repoRoot, timeout: 60_000 });

describe('npm run card', () => {
  it('prints a card for the tenant --aud names, typed aep-card+jws, valid 12 h: one the relay verifies for that tenant only', async () => {
    const key = join(mkdtempSync(join(tmpdir(), 'card-')), 'acme.jwk');
    const before = Date.now();
    const { stdout } = await card(['--agent', 'worker', '--operator', 'acme', '--aud', 'acme-corp', '--key', key, '--accepts', 'control.cancel', '--alg', 'EdDSA']);
    const after = Date.now();
    const printed = (name: string) => new RegExp(`^${name}: (.+)$`, 'm').exec(stdout)?.[1] as string;
    const compact = printed('card');
    expect(decodeProtectedHeader(compact).typ).toBe('aep-card+jws');
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(compact.split('.')[1] as string))) as Record<string, unknown>;
    expect(claims).toMatchObject({ agent: 'worker', operator: 'acme', aud: 'acme-corp', accepts: ['control.cancel'] });
    // Signed 12 h ahead of some instant while the command ran: half the day the relay takes at most.
    const signedAt = Date.parse(claims.valid_until as string) - 43_200_000;
    expect(signedAt).toBeGreaterThanOrEqual(before - 1);
    expect(signedAt).toBeLessThanOrEqual(after);
    const operator = { name: 'acme', jwks: printed('jwks'), updatedAtMs: 0 };
    const keys = new OperatorKeyCache(async () => ({ ok: false, reason: 'inline keys only' }), Date.now);
    const context = (tenant: string) => ({ agent: 'worker', declaredAccepts: ['control.cancel'], nowMs: Date.now(), operatorNamed: async () => operator, keysOf: () => keys.keysOf(operator), tenant, maxLifetimeMs: DEFAULT_CARD_MAX_LIFETIME_SECONDS * 1000 });
    expect((await verifyCard(compact, context('acme-corp'))).ok).toBe(true);
    expect(await verifyCard(compact, context('other-tenant'))).toMatchObject({ ok: false, reason: expect.stringContaining('does not name this tenant') });
    // Several tenants: --aud again, an array.
    const both = (await card(['--agent', 'worker', '--operator', 'acme', '--aud', 'acme-corp', '--aud', 'acme-staging', '--key', key])).stdout;
    const bothClaims = JSON.parse(new TextDecoder().decode(base64url.decode((/^card: (.+)$/m.exec(both)?.[1] as string).split('.')[1] as string))) as Record<string, unknown>;
    expect(bothClaims.aud).toEqual(['acme-corp', 'acme-staging']);
  });

  it('exits 2 naming --aud when none is given', async () => {
    const key = join(mkdtempSync(join(tmpdir(), 'card-')), 'acme.jwk');
    await expect(card(['--agent', 'worker', '--operator', 'acme', '--key', key])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--aud are required') });
  });
});
