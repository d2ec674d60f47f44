/** The pure rules of attenuation, capture ceilings, policy lineages and sink bounds. */
import { describe, expect, it } from 'vitest';
import { attenuate, isTenantWideAdmin, requireTenantWideAdmin } from '../../src/admin/attenuation.ts';
import { requireMaySetSinks } from '../../src/admin/bridge-admin.ts';
import { policyNamingLineages } from '../../src/admin/policy-lineage.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { policyIdentityOf } from '../../src/auth/principal.ts';
import type { SinkSettings } from '../../src/relay/bridges/sink-settings.ts';
import { lowerCeiling, readCeilingOf } from '../../src/relay/domain/read-ceiling.ts';
import { parseInvocation } from '../../bin/cli/cli-arguments.ts';

const root: Principal = { tenant: 'acme', tokenId: 'tok_root', scopes: ['emit', 'consume', 'control', 'admin'] };
const capped: Principal = { ...root, tokenId: 'tok_capped', maxCapture: 'metadata' };

describe('read ceiling', () => {
  it('is the lower of the request and the token, keeping "no ceiling" where neither lowers it', () => {
    expect(readCeilingOf(undefined, {})).toBeUndefined();
    expect(readCeilingOf('full', {})).toBe('full');
    expect(readCeilingOf(undefined, { maxCapture: 'full' })).toBeUndefined();
    expect(readCeilingOf('full', { maxCapture: 'metadata' })).toBe('metadata');
    expect(readCeilingOf(undefined, { maxCapture: 'redacted' })).toBe('redacted');
    expect(readCeilingOf('none', { maxCapture: 'redacted' })).toBe('none');
    expect(lowerCeiling('metadata', 'full')).toBe('metadata');
  });
});

describe('attenuation with capture ceilings', () => {
  it('inherits the issuer ceiling when left open and refuses one above it', () => {
    expect(attenuate(capped, { tenant: 'acme', scopes: ['consume'] }, 'issue').maxCapture).toBe('metadata');
    expect(attenuate(root, { tenant: 'acme', scopes: ['consume'] }, 'issue').maxCapture).toBe('full');
    expect(() => attenuate(capped, { tenant: 'acme', scopes: ['consume'], maxCapture: 'redacted' }, 'issue')).toThrow(/maxCapture redacted/);
  });

  it('covers a target (rotate, revoke) only when the caller could have issued it as it stands', () => {
    const legacy = { tenant: 'acme', scopes: ['consume' as const] };
    expect(() => attenuate(root, legacy, 'cover')).not.toThrow();
    // A stored token without a ceiling reads at full: a capped caller does not cover it.
    expect(() => attenuate(capped, legacy, 'cover')).toThrow(/reads at full/);
    expect(() => attenuate({ ...root, agents: ['a'] }, legacy, 'cover')).toThrow(/unbound/);
    expect(() => attenuate({ ...root, expiresAtMs: 1 }, legacy, 'cover')).toThrow(/never does/);
    expect(() => attenuate({ ...root, agents: ['a'], expiresAtMs: 10 }, { ...legacy, agents: ['a'], expiresAtMs: 5, maxCapture: 'none' }, 'cover')).not.toThrow();
  });

  it('calls tenant-wide only an admin bound to nothing, never expiring, reading at full', () => {
    expect(isTenantWideAdmin(root)).toBe(true);
    expect(isTenantWideAdmin({ ...root, maxCapture: 'full' })).toBe(true);
    for (const weaker of [capped, { ...root, agents: ['a'] }, { ...root, expiresAtMs: 1 }, { ...root, scopes: ['emit' as const] }]) expect(isTenantWideAdmin(weaker)).toBe(false);
    expect(() => requireTenantWideAdmin({ ...root, agents: ['a'] }, 'setting x')).toThrow(/setting x needs .* this one is bound to \["a"\]/);
  });
});

describe('sink bounds', () => {
  const sink = (extra: Partial<SinkSettings> = {}): SinkSettings => ({ name: 's', kind: 'cloudevents-webhook', maxCapture: 'metadata', target: 'https://x.example/', ...extra });
  it('needs consume and no expiry, and keeps each sink within the ceiling and agents', () => {
    expect(() => requireMaySetSinks(root, [sink({ maxCapture: 'full' })], 'set')).not.toThrow();
    expect(() => requireMaySetSinks({ ...root, scopes: ['admin'] }, [], 'set')).toThrow(/consume/);
    expect(() => requireMaySetSinks({ ...root, expiresAtMs: 1 }, [], 'set')).toThrow(/expires/);
    expect(() => requireMaySetSinks(capped, [sink({ maxCapture: 'redacted' })], 'set')).toThrow(/maxCapture redacted/);
    const bound = { ...root, agents: ['a'] };
    expect(() => requireMaySetSinks(bound, [sink()], 'replace')).toThrow(/every agent/);
    expect(() => requireMaySetSinks(bound, [sink({ agents: ['a', 'b'] })], 'set')).toThrow(/\["b"\]/);
    expect(() => requireMaySetSinks(bound, [sink({ agents: ['a'] })], 'set')).not.toThrow();
  });
});

describe('policy lineage', () => {
  it('matches a token by its lineage and stores rules naming a rotated id under the lineage', () => {
    expect(policyIdentityOf({ tokenId: 'tok_b' })).toBe('tok_b');
    expect(policyIdentityOf({ tokenId: 'tok_b', lineage: 'tok_a' })).toBe('tok_a');
    const policy = { default: 'allow' as const, rules: [{ effect: 'deny' as const, tokens: ['tok_c', 'tok_a', 'tok_x*', 'tok_unknown'] }, { effect: 'allow' as const, types: ['control.*'] }] };
    const tokens = [{ tokenId: 'tok_a' }, { tokenId: 'tok_c', lineage: 'tok_a' }, { tokenId: 'tok_d', lineage: 'tok_d' }];
    expect(policyNamingLineages(policy, tokens).rules).toEqual([{ effect: 'deny', tokens: ['tok_a', 'tok_x*', 'tok_unknown'] }, { effect: 'allow', types: ['control.*'] }]);
    expect(policyNamingLineages(policy, [{ tokenId: 'tok_a' }])).toBe(policy);
  });
});

describe('CLI arguments for ceilings and quotas', () => {
  it('parses --max-capture and quota changes, refusing malformed ones with usage errors', () => {
    expect(parseInvocation(['tokens', 'issue', '--scopes', 'consume', '--max-capture', 'metadata']).command).toMatchObject({ maxCapture: 'metadata' });
    expect(() => parseInvocation(['tokens', 'issue', '--scopes', 'consume', '--max-capture', 'most'])).toThrow(/--max-capture/);
    expect(parseInvocation(['quotas', 'set', '--tenant', 'acme', 'maxConnections=5', 'retentionDays=default']).command).toEqual({ kind: 'quotas set', tenant: 'acme', changes: { maxConnections: 5, retentionDays: null } });
    expect(() => parseInvocation(['quotas', 'set', '--tenant', 'acme'])).toThrow(/name/);
    expect(() => parseInvocation(['quotas', 'set', 'maxConnections=1.5'])).toThrow(/positive whole number/);
    expect(() => parseInvocation(['quotas', 'show', '--scopes', 'emit'])).toThrow(/does not take --scopes/);
  });
});
