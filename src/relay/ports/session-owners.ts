/**
 * Who owns each session: the agent whose sequenced events it holds (AEP-0001 §5.2: every
 * session has exactly one owning emitter). Recorded by the first sequenced event and never
 * changed while the session's history is retained.
 */
export interface SessionOwnersPort {
  /**
   * Records `agent` as the owner of the session unless another agent already is; returns the
   * owner as stored (`agent` itself when it owns or now owns the session).
   */
  settleOwner(tenant: string, session: string, agent: string): Promise<string>;
  /** The session's owner, or undefined when it has none (no sequenced event yet). */
  ownerOf(tenant: string, session: string): Promise<string | undefined>;
}
