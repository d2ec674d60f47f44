/**
 * Token digests this process was told name no usable token for good (unknown, revoked or
 * expired), so the same bad token presented again is refused from memory instead of costing
 * another token read each time.
 *
 * Bounded: at most `capacity` digests, each trusted for `ttlMs` (the oldest forgotten first),
 * so one bad token costs at most one read per `ttlMs` per instance while fewer than
 * `capacity` other bad tokens arrive in between. Only final refusals are kept: a token of a
 * disabled tenant resolves again once the tenant is enabled, so it is never cached. A token
 * minted later cannot be in here: its 256-bit secret was never presented before it existed.
 */
import type { Clock } from '../ports/clock.ts';

export const REFUSED_TOKEN_TTL_MS = 60_000;
export const REFUSED_TOKEN_CAPACITY = 10_000;

export class RefusedTokens {
  /** Digest to when it was refused; insertion order is age order. */
  private readonly refusedAt = new Map<string, number>();

  constructor(
    private readonly now: Clock,
    private readonly ttlMs = REFUSED_TOKEN_TTL_MS,
    private readonly capacity = REFUSED_TOKEN_CAPACITY,
  ) {}

  has(digest: string): boolean {
    const at = this.refusedAt.get(digest);
    if (at === undefined) return false;
    if (this.now() - at < this.ttlMs) return true;
    this.refusedAt.delete(digest);
    return false;
  }

  remember(digest: string): void {
    this.refusedAt.delete(digest);
    this.refusedAt.set(digest, this.now());
    while (this.refusedAt.size > this.capacity) {
      const oldest = this.refusedAt.keys().next();
      if (oldest.done) break;
      this.refusedAt.delete(oldest.value);
    }
  }
}
