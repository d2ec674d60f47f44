/**
 * The per-connection frame budget: a token bucket of `perSecond` frames, holding at most
 * `burst`, per WebSocket connection, kept in this process's memory keyed by connection id.
 *
 * Why in memory: every `$default` frame already costs a read of the connection record, and a
 * budget kept in that record would add a write per frame, which is what a flood must not buy.
 * A frame over budget is answered before any DynamoDB call. The bound is per socket-function
 * instance: API Gateway may hand one connection's frames to several instances at once, so a
 * connection gets at most `burst + perSecond × seconds` frames past each instance that serves
 * it (one instance locally).
 */
import { limitExceeded } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import type { Clock } from '../ports/clock.ts';

/** Connections tracked at once; past it the entries idle longest (full buckets) are forgotten first. */
const MAX_TRACKED_CONNECTIONS = 20_000;

interface Bucket {
  tokens: number;
  refilledAtMs: number;
}

export class FrameBudgets {
  private readonly buckets = new Map<string, Bucket>();

  /** `perSecond` 0: no budget (every frame passes). */
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: Clock,
  ) {}

  /** Takes one frame off the connection's budget; false when it has none left. */
  take(connectionId: string): boolean {
    if (this.perSecond === 0) return true;
    const now = this.now();
    const bucket = this.buckets.get(connectionId) ?? { tokens: this.burst, refilledAtMs: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.refilledAtMs) * this.perSecond) / 1000);
    bucket.refilledAtMs = now;
    // Re-inserted, so the map's order is least recently used first.
    this.buckets.delete(connectionId);
    this.buckets.set(connectionId, bucket);
    if (this.buckets.size > MAX_TRACKED_CONNECTIONS) this.forgetOldest();
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** A closed connection's bucket goes with it. */
  forget(connectionId: string): void {
    this.buckets.delete(connectionId);
  }

  /** The least recently used connection goes first; forgotten, it starts again from a full bucket (at most `burst` frames more). */
  private forgetOldest(): void {
    const oldest = this.buckets.keys().next();
    if (!oldest.done) this.buckets.delete(oldest.value);
  }
}

/**
 * The in-band answer to a frame over budget (AEP-0003 §6.5: `limit-exceeded`, naming the
 * limit); `socket-refusals.ts` gives it the frame's `id` or its event's id as `cause`.
 */
export function overBudgetRefusal(perSecond: number): RelayError {
  return limitExceeded(`a connection may send ${perSecond} frames per second (AEP_SOCKET_FRAMES_PER_SECOND); this frame was not handled, send it again later`);
}
