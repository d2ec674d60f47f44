/** Role rules: which ID-token claims give which grant, and the refusal that names the rule set. */
import { describe, expect, it } from 'vitest';
import { credentialExpiresAtMs } from '../../../src/auth/oidc/credential-lifetime.ts';
import { CEILING_MAX_CREDENTIAL_SECONDS, DEFAULT_MAX_CREDENTIAL_SECONDS, parseIdentityProviderDocument } from '../../../src/auth/oidc/identity-provider-settings.ts';
import { grantForClaims, parseRoleRuleSet } from '../../../src/auth/oidc/role-rules.ts';
import type { RoleRuleSet } from '../../../src/auth/oidc/role-rules.ts';

const RULES: RoleRuleSet = {
  name: 'acme rules',
  rules: [
    { claim: 'groups', equals: 'relay-admins', scopes: ['consume'], maxCapture: 'full', admin: true },
    { claim: 'groups', equals: 'agent-ops', scopes: ['consume', 'control'], agents: ['ci'], maxCapture: 'redacted', admin: false },
    { claim: 'email', equals: 'auditor@acme.test', scopes: ['consume'], maxCapture: 'metadata', admin: false },
  ],
};

describe('grantForClaims', () => {
  it.each([
    ['an admin group', { groups: ['staff', 'relay-admins'] }, { scopes: ['consume', 'admin'], maxCapture: 'full', ruleIndex: 0 }],
    ['the ops group, bound to its agents', { groups: ['agent-ops'] }, { scopes: ['consume', 'control'], agents: ['ci'], maxCapture: 'redacted', ruleIndex: 1 }],
    ['a string claim equal to the rule', { email: 'auditor@acme.test' }, { scopes: ['consume'], maxCapture: 'metadata', ruleIndex: 2 }],
    ['the first matching rule when several match', { groups: ['agent-ops', 'relay-admins'] }, { scopes: ['consume', 'admin'], ruleIndex: 0 }],
  ])('gives %s its grant', (_name, claims, grant) => {
    const verdict = grantForClaims(claims, RULES, 'Dana');
    expect(verdict.ok).toBe(true);
    expect(verdict.ok && verdict.grant).toMatchObject(grant);
  });

  it.each([
    ['no mapped group', { groups: ['contractors'] }],
    ['no groups claim at all', {}],
    ['a group name only as a substring', { groups: 'agent-ops-readonly' }],
  ])('refuses a person with %s, naming the rule set', (_name, claims) => {
    const verdict = grantForClaims(claims, RULES, 'Victor');
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.refusal).toMatch(/Victor signed in, but no rule of this tenant's rule set "acme rules" matches/);
  });
});

describe('parseRoleRuleSet', () => {
  it('defaults an unset ceiling to metadata and admin to false', () => {
    const parsed = parseRoleRuleSet({ name: 'r', rules: [{ claim: 'groups', equals: 'ops', scopes: ['consume'] }] });
    expect(parsed.ok && parsed.value.rules[0]).toEqual({ claim: 'groups', equals: 'ops', scopes: ['consume'], maxCapture: 'metadata', admin: false });
  });

  it.each([
    ['admin as a scope', { name: 'r', rules: [{ claim: 'groups', equals: 'ops', scopes: ['admin'] }] }, /admin is given by/],
    ['an unknown member', { name: 'r', rules: [{ claim: 'groups', equals: 'ops', scopes: ['consume'], role: 'x' }] }, /unknown member role/],
    ['no name', { rules: [] }, /ruleSet.name/],
    ['a rule giving nothing', { name: 'r', rules: [{ claim: 'groups', equals: 'ops', scopes: [] }] }, /at least one scope/],
  ])('refuses %s', (_name, document, reason) => {
    const parsed = parseRoleRuleSet(document);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(reason);
  });
});

describe('credentialExpiresAtMs', () => {
  const now = 1_800_000_000_000;
  it('ends with the ID token when it expires first', () => {
    expect(credentialExpiresAtMs(now, now / 1000 + 600, DEFAULT_MAX_CREDENTIAL_SECONDS)).toBe(now + 600_000);
  });
  it("ends at the tenant's maximum when the ID token lives longer", () => {
    expect(credentialExpiresAtMs(now, now / 1000 + 86_400, 3600)).toBe(now + 3_600_000);
  });
  it('defaults the maximum to 8 hours', () => {
    expect(DEFAULT_MAX_CREDENTIAL_SECONDS).toBe(8 * 3600);
  });
});

describe('parseIdentityProviderDocument', () => {
  const base = { issuer: 'https://acme.okta.com/oauth2/default', clientId: 'abc', redirectUris: ['https://relay.acme.test/console/'], ruleSet: { name: 'acme', rules: [] } };
  it('takes a provider with defaults: its host as display name, profile and email scopes, 8 hours', () => {
    const parsed = parseIdentityProviderDocument(base, { allowLoopback: false });
    expect(parsed.ok && parsed.value).toMatchObject({ displayName: 'acme.okta.com', scopes: ['profile', 'email'], maxCredentialSeconds: DEFAULT_MAX_CREDENTIAL_SECONDS });
  });
  it.each([
    ['an http issuer', { ...base, issuer: 'http://acme.okta.com' }, /https URL/],
    ['the metadata address', { ...base, issuer: 'https://169.254.169.254/' }, /link-local/],
    ['loopback in a deployment', { ...base, issuer: 'https://127.0.0.1:8443' }, /loopback/],
    ['a lifetime over the ceiling', { ...base, maxCredentialSeconds: CEILING_MAX_CREDENTIAL_SECONDS + 1 }, /maxCredentialSeconds/],
    ['a redirect URI with a fragment', { ...base, redirectUris: ['https://relay.acme.test/console/#x'] }, /no query or fragment/],
  ])('refuses %s', (_name, document, reason) => {
    const parsed = parseIdentityProviderDocument(document, { allowLoopback: false });
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(reason);
  });
  it('takes a loopback http issuer where the rule allows loopback (the local stack)', () => {
    expect(parseIdentityProviderDocument({ ...base, issuer: 'http://127.0.0.1:4000' }, { allowLoopback: true }).ok).toBe(true);
  });
});
