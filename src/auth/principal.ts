import type { CaptureLevel } from '../protocol/levels.ts';
import type { Person } from './oidc/person.ts';
import type { Scope } from './scopes.ts';

/** Who is speaking, as established by a token (AEP-0003 §8.1). */
export interface Principal {
  tenant: string;
  tokenId: string;
  scopes: readonly Scope[];
  /** When set, events whose `agent` is not listed are refused (identity binding). */
  agents?: readonly string[];
  /** When the token expires (epoch ms), if it does: open connections end then. */
  expiresAtMs?: number;
  /** The token's capture ceiling (`TokenGrant.maxCapture`); absent: `full`. */
  maxCapture?: CaptureLevel;
  /** When set, an identity card must be this operator's (`TokenGrant.operator`). */
  operator?: string;
  /** The token's rotation lineage (`TokenGrant.lineage`); absent: its own id. */
  lineage?: string;
  /** The signed-in person the token was issued to (team sign-in), when it was. */
  person?: Person;
}

/** The name control policy rules match the token by: stable through rotation. */
export function policyIdentityOf(principal: Pick<Principal, 'tokenId' | 'lineage'>): string {
  return principal.lineage ?? principal.tokenId;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}
