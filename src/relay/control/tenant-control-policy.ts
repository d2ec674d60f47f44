/** The tenant's control policy as routing and the hello read it: stored, default, or fail-closed. */
import { DEFAULT_CONTROL_POLICY, parseControlPolicy } from '../domain/control-policy.ts';
import type { ControlPolicy } from '../domain/control-policy.ts';
import type { ControlPoliciesPort } from '../ports/control-policies.ts';

export async function controlPolicyOf(controlPolicies: ControlPoliciesPort, tenant: string): Promise<ControlPolicy> {
  const stored = await controlPolicies.controlPolicyOf(tenant);
  if (stored === undefined) return DEFAULT_CONTROL_POLICY;
  try {
    const parsed = parseControlPolicy(JSON.parse(stored));
    // A stored policy that no longer parses fails closed.
    return parsed.ok ? parsed.policy : { default: 'deny', rules: [] };
  } catch {
    return { default: 'deny', rules: [] };
  }
}
