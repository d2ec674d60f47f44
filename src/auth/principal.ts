import type { Scope } from './scopes.ts';

/** Who is speaking, as established by a token (AEP-0003 §8.1). */
export interface Principal {
  tenant: string;
  tokenId: string;
  scopes: readonly Scope[];
  /** When set, events whose `agent` is not listed are refused (identity binding). */
  agents?: readonly string[];
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}
