/** Where each tenant's control ACL (AEP-0004 §4.1 authorization) is kept, as validated JSON text. */
export interface ControlPoliciesPort {
  /** The stored policy text; undefined when the tenant has none (or does not exist). */
  controlPolicyOf(tenant: string): Promise<string | undefined>;
  /** Sets (or, with undefined, clears) the policy; false when there is no such tenant. */
  setControlPolicy(tenant: string, policyJson: string | undefined): Promise<boolean>;
}
