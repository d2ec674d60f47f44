/**
 * A connection's claim on a session (AEP-0004 §4.5): what routes commands to it and what the
 * roster lists (AEP-0003 §4.1). Several claims of one session are kept, never merged.
 */
import type { JsonObject } from '../../protocol/event.ts';
import type { VerifiedStanding } from './verified-standing.ts';

/** The claimant's declarations, taken verbatim from its hello (AEP-0003 §4.1 rule 4). */
export interface ClaimDeclarations {
  agent?: string;
  instance?: string;
  control?: JsonObject;
  emits?: JsonObject[keyof JsonObject];
  /** Not a declaration: the relay's verification of the claimant's identity card, when it had a valid one. */
  verified?: VerifiedStanding;
}

export interface StoredClaim {
  session: string;
  connectionId: string;
  declarations: ClaimDeclarations;
  expiresAtMs: number;
}
