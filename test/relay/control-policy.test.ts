import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTROL_POLICY, evaluateControlPolicy, parseControlPolicy } from '../../src/relay/domain/control-policy.ts';

const request = { tokenId: 'tok-1', type: 'control.cancel', session: 'prod-7', targetAgent: 'claude-code' };

describe('control policy', () => {
  it('allows everything by default', () => {
    expect(evaluateControlPolicy(DEFAULT_CONTROL_POLICY, request)).toBe('allow');
  });

  it('applies the first matching rule, with exact and prefix patterns on every field', () => {
    const parsed = parseControlPolicy({
      default: 'deny',
      rules: [
        { effect: 'deny', tokens: ['tok-1'], types: ['control.cancel'], sessions: ['prod-*'] },
        { effect: 'allow', types: ['control.*'], agents: ['claude-code'] },
      ],
    });
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(evaluateControlPolicy(parsed.policy, request)).toBe('deny');
    expect(evaluateControlPolicy(parsed.policy, { ...request, session: 'dev-1' })).toBe('allow');
    expect(evaluateControlPolicy(parsed.policy, { ...request, session: 'dev-1', targetAgent: 'codex' })).toBe('deny');
    expect(evaluateControlPolicy(parsed.policy, { tokenId: 'tok-2', type: 'control.pause', session: 'x' })).toBe('deny');
  });

  it('refuses malformed policies with a reason', () => {
    for (const bad of [null, [], { default: 'maybe' }, { rules: {} }, { rules: [{ effect: 'allow', types: [] }] }, { rules: [{ effect: 'allow', colour: ['x'] }] }, { rules: [{ types: ['a'] }] }]) {
      const parsed = parseControlPolicy(bad);
      expect(parsed.ok, JSON.stringify(bad)).toBe(false);
    }
  });

  it('takes a card lifetime bound of 1 s to a day, and nothing longer', () => {
    expect(parseControlPolicy({ cardMaxLifetimeSeconds: 3600 })).toEqual({ ok: true, policy: { default: 'allow', rules: [], cardMaxLifetimeSeconds: 3600 } });
    for (const bad of [0, 86_401, 1.5, '3600']) {
      expect(parseControlPolicy({ cardMaxLifetimeSeconds: bad })).toEqual({ ok: false, reason: 'cardMaxLifetimeSeconds must be an integer from 1 to 86400' });
    }
  });
});
