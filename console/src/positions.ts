/**
 * Where the tail is in each session, so a paused tail resumes exactly after what it showed
 * (AEP-0003 §7: the endpoint delivers strictly after each `from` position).
 */
import { comparePositions, positionOf } from '../../src/protocol/positions.ts';
import type { Position } from '../../src/protocol/positions.ts';

export class PositionBook {
  private readonly latest = new Map<string, Position>();

  /** Records an event's position (session-scoped, sequenced events only). */
  note(event: Record<string, unknown>): void {
    const position = positionOf(event as Parameters<typeof positionOf>[0]);
    if (position === undefined) return;
    const known = this.latest.get(position.session);
    if (known !== undefined && comparePositions(position, known) <= 0) return;
    // Re-inserted so the map's order is the order sessions were last heard from.
    this.latest.delete(position.session);
    this.latest.set(position.session, position);
  }

  /**
   * The `from` array, newest sessions last; capped at `limit` positions (the relay refuses
   * more than it replays, AEP-0003 §6.5 `limit-exceeded`), keeping the most recently seen.
   */
  fromParameter(limit: number): { session: string; epoch: number; seq: number }[] {
    const all = [...this.latest.values()].map((position) => ({ session: position.session, epoch: position.epoch, seq: position.seq }));
    return all.slice(Math.max(0, all.length - limit));
  }

  get size(): number {
    return this.latest.size;
  }
}
