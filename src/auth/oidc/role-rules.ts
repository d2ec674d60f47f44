/**
 * A tenant's role rules: which ID-token claims give a signed-in person what grant. The first
 * rule whose claim matches decides; a person no rule matches is refused with a message naming
 * the rule set, so they know whose rules to ask about (not a bare 401).
 *
 * A rule matches when the claim equals `equals` (a string claim) or, for an array claim such as
 * `groups`, contains it. What a match gives is a grant like any token's, with `admin` adding
 * the admin scope. Unset capture ceilings read `metadata`: a provider group is a coarse thing,
 * and DESIGN.md §20 defaults what a person did not choose to the least.
 */
import type { CaptureLevel } from '../../protocol/levels.ts';
import { isCaptureLevel } from '../../protocol/levels.ts';
import type { Scope } from '../scopes.ts';
import { isScope } from '../scopes.ts';

export interface RoleRule {
  /** The ID-token claim read, e.g. `groups`, `cognito:groups`, `roles`, `email`. */
  claim: string;
  /** The value the claim must equal or (an array claim) contain. */
  equals: string;
  scopes: readonly Exclude<Scope, 'admin'>[];
  /** Bound to these agents, when set. */
  agents?: readonly string[];
  maxCapture: CaptureLevel;
  /** Adds the admin scope (tenant tokens and settings, within the credential's own grant). */
  admin: boolean;
}

export interface RoleRuleSet {
  /** Named in every refusal: "no rule of <name> matches you". */
  name: string;
  rules: readonly RoleRule[];
}

export interface RuleGrant {
  scopes: Scope[];
  agents?: string[];
  maxCapture: CaptureLevel;
  /** The index of the rule that matched, for the audit line. */
  ruleIndex: number;
}

export type RuleVerdict = { ok: true; grant: RuleGrant } | { ok: false; refusal: string };

export const MAX_RULES = 50;
const MAX_TEXT = 200;

/** The grant the first matching rule gives, or the refusal naming the rule set. */
export function grantForClaims(claims: Readonly<Record<string, unknown>>, ruleSet: RoleRuleSet, who: string): RuleVerdict {
  for (const [ruleIndex, rule] of ruleSet.rules.entries()) {
    if (!claimMatches(claims[rule.claim], rule.equals)) continue;
    const scopes: Scope[] = [...rule.scopes, ...(rule.admin ? (['admin'] as const) : [])];
    return { ok: true, grant: { scopes, ...(rule.agents === undefined ? {} : { agents: [...rule.agents] }), maxCapture: rule.maxCapture, ruleIndex } };
  }
  return {
    ok: false,
    refusal: `${who} signed in, but no rule of this tenant's rule set ${JSON.stringify(ruleSet.name)} matches their ID token (rules read ${describeClaims(ruleSet)}); ask the tenant's admin to add them to a mapped group`,
  };
}

function claimMatches(value: unknown, wanted: string): boolean {
  if (typeof value === 'string') return value === wanted;
  return Array.isArray(value) && value.some((entry) => entry === wanted);
}

function describeClaims(ruleSet: RoleRuleSet): string {
  const claims = [...new Set(ruleSet.rules.map((rule) => rule.claim))];
  return claims.length === 0 ? 'no claims: the set is empty' : claims.join(', ');
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Parses a rule set document: `{ name, rules: [{ claim, equals, scopes, agents?, maxCapture?, admin? }] }`. */
export function parseRoleRuleSet(document: unknown): Parsed<RoleRuleSet> {
  if (!isRecord(document)) return { ok: false, reason: 'ruleSet is an object { name, rules }' };
  const { name, rules } = document;
  if (!isText(name)) return { ok: false, reason: `ruleSet.name is a string of 1 to ${MAX_TEXT} characters` };
  if (!Array.isArray(rules) || rules.length > MAX_RULES) return { ok: false, reason: `ruleSet.rules is an array of at most ${MAX_RULES} rules` };
  const parsed: RoleRule[] = [];
  for (const [index, rule] of rules.entries()) {
    const one = parseRule(rule);
    if (!one.ok) return { ok: false, reason: `ruleSet.rules[${index}]: ${one.reason}` };
    parsed.push(one.value);
  }
  return { ok: true, value: { name, rules: parsed } };
}

function parseRule(rule: unknown): Parsed<RoleRule> {
  if (!isRecord(rule)) return { ok: false, reason: 'a rule is an object { claim, equals, scopes, agents?, maxCapture?, admin? }' };
  const known = new Set(['claim', 'equals', 'scopes', 'agents', 'maxCapture', 'admin']);
  const unknown = Object.keys(rule).filter((key) => !known.has(key));
  if (unknown.length > 0) return { ok: false, reason: `unknown member ${unknown.join(', ')}` };
  if (!isText(rule.claim)) return { ok: false, reason: 'claim is the name of an ID-token claim' };
  if (!isText(rule.equals)) return { ok: false, reason: 'equals is the value the claim must equal or contain' };
  const scopes = rule.scopes;
  if (!Array.isArray(scopes) || !scopes.every((scope) => isScope(scope) && scope !== 'admin')) return { ok: false, reason: 'scopes lists emit, consume, control (admin is given by "admin": true)' };
  const agents = rule.agents;
  if (agents !== undefined && (!Array.isArray(agents) || agents.length === 0 || !agents.every(isText))) return { ok: false, reason: 'agents, when given, is a non-empty array of agent names' };
  const maxCapture = rule.maxCapture ?? 'metadata';
  if (!isCaptureLevel(maxCapture)) return { ok: false, reason: 'maxCapture is none, metadata, redacted or full' };
  if (rule.admin !== undefined && typeof rule.admin !== 'boolean') return { ok: false, reason: 'admin is true or false' };
  if (scopes.length === 0 && rule.admin !== true) return { ok: false, reason: 'a rule gives at least one scope' };
  return {
    ok: true,
    value: {
      claim: rule.claim,
      equals: rule.equals,
      scopes: [...new Set(scopes as Exclude<Scope, 'admin'>[])],
      ...(agents === undefined ? {} : { agents: [...new Set(agents as string[])] }),
      maxCapture,
      admin: rule.admin === true,
    },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value !== '' && value.length <= MAX_TEXT;
