/**
 * The session claims this process has recorded or is recording, so an emitter's further events
 * skip the conditional claim write (AEP-0004 §4.5): a pipelined burst of first events waits for
 * the one write in flight instead of racing it with a write each. Held by the runtime, one per
 * process; bounded, and forgetting is harmless: the claim write is idempotent.
 */
export class KnownClaims {
  private readonly claims = new Map<string, Promise<void>>();

  constructor(private readonly limit = 50_000) {}

  /** Runs `record` once per (tenant, connection, session) in this process; a failed one is tried again by the next caller. */
  async once(tenant: string, connectionId: string, session: string, record: () => Promise<unknown>): Promise<void> {
    const key = `${tenant}\u0000${connectionId}\u0000${session}`;
    let claim = this.claims.get(key);
    if (claim === undefined) {
      if (this.claims.size > this.limit) this.claims.clear();
      claim = record().then(() => undefined);
      this.claims.set(key, claim);
      claim.catch(() => this.claims.delete(key));
    }
    await claim;
  }
}
