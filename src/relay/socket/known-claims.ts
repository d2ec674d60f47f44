/**
 * The session claims this process has already recorded, so an emitter's repeated events skip
 * the conditional claim write (AEP-0004 §4.5). Held by the runtime, one per process; bounded,
 * and forgetting is harmless: the claim write is idempotent.
 */
export class KnownClaims {
  private readonly keys = new Set<string>();

  constructor(private readonly limit = 50_000) {}

  has(tenant: string, connectionId: string, session: string): boolean {
    return this.keys.has(keyOf(tenant, connectionId, session));
  }

  remember(tenant: string, connectionId: string, session: string): void {
    if (this.keys.size > this.limit) this.keys.clear();
    this.keys.add(keyOf(tenant, connectionId, session));
  }
}

function keyOf(tenant: string, connectionId: string, session: string): string {
  return `${tenant}\u0000${connectionId}\u0000${session}`;
}
