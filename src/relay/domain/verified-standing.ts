/**
 * A connection's verified standing: the operator whose card it presented, until the card's
 * `valid_until`. Checked against the clock wherever it counts (routing, the roster, history),
 * so a connection loses it the moment the card expires, with no write at that time.
 */
export interface VerifiedStanding {
  operator: string;
  /** The JWK thumbprint (RFC 7638) of the operator key that verified the card. */
  key: string;
  /** The card's `valid_until`, epoch ms. */
  untilMs: number;
}

export function isVerifiedNow(standing: VerifiedStanding | undefined, nowMs: number): standing is VerifiedStanding {
  return standing !== undefined && standing.untilMs > nowMs;
}

/** The additive member a roster entry or history item carries for a verified party (AEP-0003 §4 rule 4). */
export function verifiedMember(standing: VerifiedStanding): { operator: string; valid_until: string } {
  return { operator: standing.operator, valid_until: new Date(standing.untilMs).toISOString() };
}
