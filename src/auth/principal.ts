import type { Scope } from './scopes.ts';

/** Who is speaking, as established by a token (AEP-0003 §8.1). */
export interface Principal {
  tenant: string;
  tokenId: string;
  scopes: readonly Scope[];
  /** When set, events whose `agent` is not listed are refused (identity binding). */
  agents?: readonly string[];
  /** When the token expires (epoch ms), if it does: open connections end then (issue 15). */
  expiresAtMs?: number;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}
