/** Session claims (AEP-0004 §4.5): who routes commands for a session, and the roster. */
import type { ClaimDeclarations, StoredClaim } from '../domain/claim.ts';

export interface ClaimsPort {
  /**
   * Records that a connection claims a session. A second connection's claim is kept beside the
   * first, never merged; false when this connection already held the claim.
   */
  claim(tenant: string, connectionId: string, session: string, declarations: ClaimDeclarations): Promise<boolean>;
  /** Live claims of one session (routing). */
  claimsOf(tenant: string, session: string): Promise<StoredClaim[]>;
  /** Every live claim of a tenant (the roster, AEP-0003 §4.1). */
  allClaims(tenant: string): Promise<StoredClaim[]>;
}
