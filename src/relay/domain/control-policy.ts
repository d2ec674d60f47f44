/**
 * A tenant's control ACL (AEP-0004 §4.3: who may command whom is deployment policy).
 * Evaluated at routing time over the sender's token, the command type, and the target's
 * session and agent. First matching rule wins; without a match the policy's default applies
 * (`allow`: a token with the `control` scope may command every session of its own tenant).
 *
 * Patterns are exact strings or a prefix ending in `*` (`prod-*`, `control.*`).
 */
export type PolicyEffect = 'allow' | 'deny';

export interface ControlRule {
  effect: PolicyEffect;
  tokens?: string[];
  types?: string[];
  sessions?: string[];
  agents?: string[];
}

export interface ControlPolicy {
  default: PolicyEffect;
  rules: ControlRule[];
  /**
   * Session patterns whose claimants count only when verified (a hello with a valid identity
   * card, AEP-0003 §8.3; `identity/identity-card.ts`): an unverified claim of such a session is
   * not a claimant, so it neither receives commands nor makes the session `ambiguous`.
   * `["*"]` is the whole tenant. Absent: every claim counts (AEP-0004 §4.5 as written).
   */
  verifiedClaimants?: string[];
  /** Session patterns that take commands only from verified senders (`unauthorized` otherwise). */
  verifiedSenders?: string[];
  /**
   * What a hello whose card fails verification gets: `continue` (the default) answers it with
   * an `error` frame and carries on unverified; `close` refuses the connection. Under `close` a
   * verified connection is also closed when its card's `valid_until` passes.
   */
  cardFailure?: CardFailure;
  /**
   * How far ahead a card's `valid_until` may lie when it is presented, in seconds (1 to
   * `DEFAULT_CARD_MAX_LIFETIME_SECONDS`, the default): a tenant may shorten it, never lengthen it.
   */
  cardMaxLifetimeSeconds?: number;
}

export type CardFailure = 'continue' | 'close';

/** A card lives at most a day (docs/security-and-isolation.md "Identity cards"), unless the tenant's policy says less. */
export const DEFAULT_CARD_MAX_LIFETIME_SECONDS = 86_400;

export const DEFAULT_CONTROL_POLICY: ControlPolicy = { default: 'allow', rules: [] };

export interface ControlRequest {
  tokenId: string;
  type: string;
  session: string;
  /**
   * The agent owning the target session (`session-ownership.ts`), when it has one. It is
   * decided without looking at live claims, so the verdict cannot tell claimed sessions
   * from unclaimed ones (a denied sender learns nothing about live sessions).
   */
  targetAgent?: string;
}

export function evaluateControlPolicy(policy: ControlPolicy, request: ControlRequest): PolicyEffect {
  for (const rule of policy.rules) {
    if (
      matchesAny(rule.tokens, request.tokenId) &&
      matchesAny(rule.types, request.type) &&
      matchesAny(rule.sessions, request.session) &&
      agentsMatch(rule, request.targetAgent)
    ) {
      return rule.effect;
    }
  }
  return policy.default;
}

/**
 * A rule naming agents, for a session with no owner yet: a deny rule applies (fail closed),
 * an allow rule does not. So a command that would be denied for some owner is not allowed
 * merely because its session is unknown.
 */
function agentsMatch(rule: ControlRule, targetAgent: string | undefined): boolean {
  if (rule.agents !== undefined && targetAgent === undefined) return rule.effect === 'deny';
  return matchesAny(rule.agents, targetAgent);
}

/** Whether the policy's verdict can depend on the target's agent (only then is the owner looked up). */
export function policyNamesAgents(policy: ControlPolicy): boolean {
  return policy.rules.some((rule) => rule.agents !== undefined);
}

function matchesAny(patterns: readonly string[] | undefined, value: string | undefined): boolean {
  if (patterns === undefined) return true;
  if (value === undefined) return false;
  return patterns.some((pattern) => (pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern));
}

const FIELDS = ['tokens', 'types', 'sessions', 'agents'] as const;
const POLICY_MEMBERS = ['default', 'rules', 'verifiedClaimants', 'verifiedSenders', 'cardFailure', 'cardMaxLifetimeSeconds'];

/** Whether `session` matches one of the patterns of a verification rule (absent: none). */
export function sessionRequiresVerified(patterns: readonly string[] | undefined, session: string): boolean {
  return patterns !== undefined && matchesAny(patterns, session);
}

/** Validates a policy document from an operator; returns the reason it is refused, or the policy. */
export function parseControlPolicy(value: unknown): { ok: true; policy: ControlPolicy } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'a policy is an object { default, rules }' };
  const record = value as Record<string, unknown>;
  const fallback = record.default ?? 'allow';
  if (fallback !== 'allow' && fallback !== 'deny') return { ok: false, reason: 'default must be "allow" or "deny"' };
  const rawRules = record.rules ?? [];
  if (!Array.isArray(rawRules) || rawRules.length > 100) return { ok: false, reason: 'rules must be an array of at most 100 rules' };
  const rules: ControlRule[] = [];
  for (const [index, raw] of rawRules.entries()) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: `rule ${index} must be an object` };
    const candidate = raw as Record<string, unknown>;
    if (candidate.effect !== 'allow' && candidate.effect !== 'deny') return { ok: false, reason: `rule ${index}: effect must be "allow" or "deny"` };
    const rule: ControlRule = { effect: candidate.effect };
    for (const field of FIELDS) {
      const patterns = candidate[field];
      if (patterns === undefined) continue;
      if (!Array.isArray(patterns) || patterns.length === 0 || !patterns.every((pattern) => typeof pattern === 'string' && pattern !== '')) {
        return { ok: false, reason: `rule ${index}: ${field} must be a non-empty array of non-empty strings` };
      }
      rule[field] = patterns as string[];
    }
    const unknown = Object.keys(candidate).filter((key) => key !== 'effect' && !(FIELDS as readonly string[]).includes(key));
    if (unknown.length > 0) return { ok: false, reason: `rule ${index}: unknown member ${unknown[0]}` };
    rules.push(rule);
  }
  const verification: Pick<ControlPolicy, 'verifiedClaimants' | 'verifiedSenders' | 'cardFailure' | 'cardMaxLifetimeSeconds'> = {};
  for (const member of ['verifiedClaimants', 'verifiedSenders'] as const) {
    const patterns = record[member];
    if (patterns === undefined) continue;
    if (!Array.isArray(patterns) || patterns.length === 0 || patterns.length > 100 || !patterns.every((pattern) => typeof pattern === 'string' && pattern !== '')) {
      return { ok: false, reason: `${member} must be a non-empty array of session patterns ("*" for every session)` };
    }
    verification[member] = patterns as string[];
  }
  if (record.cardFailure !== undefined) {
    if (record.cardFailure !== 'continue' && record.cardFailure !== 'close') return { ok: false, reason: 'cardFailure must be "continue" or "close"' };
    verification.cardFailure = record.cardFailure;
  }
  if (record.cardMaxLifetimeSeconds !== undefined) {
    const seconds = record.cardMaxLifetimeSeconds;
    if (!Number.isSafeInteger(seconds) || (seconds as number) < 1 || (seconds as number) > DEFAULT_CARD_MAX_LIFETIME_SECONDS) {
      return { ok: false, reason: `cardMaxLifetimeSeconds must be an integer from 1 to ${DEFAULT_CARD_MAX_LIFETIME_SECONDS}` };
    }
    verification.cardMaxLifetimeSeconds = seconds as number;
  }
  const unknownMember = Object.keys(record).find((key) => !POLICY_MEMBERS.includes(key));
  if (unknownMember !== undefined) return { ok: false, reason: `unknown policy member ${unknownMember}` };
  return { ok: true, policy: { default: fallback, rules, ...verification } };
}
