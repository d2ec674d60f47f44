/**
 * The one rule for "does this consumer already have it", used where a subscription goes from
 * replay to live (`subscription-handoff.ts`): fan-out parks what it releases while the
 * subscription replays, and the handoff delivers a parked event unless the opening gave it.
 *
 * The opening gave a consumer: every event at or below its resume position (its own claim,
 * AEP-0003 §7) and every event at or below the release point its replay read, except late
 * ones (released after the release point passed them, `emitter-order.ts`), which are new to it
 * whatever it holds. A redelivery (a retransmit forwarded as received, AEP-0003 §5) always goes.
 * An event replayed to it by exact position it has, late or not.
 */
import type { AepEvent } from '../../protocol/event.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
import type { Place } from './emitter-order.ts';

/** How an event reached the binding: as released (possibly late), or as a forwarded redelivery. */
export interface ArrivalFlags {
  late?: boolean;
  redelivery?: boolean;
}

export class Opening {
  /** Per session: the position the consumer resumed after. */
  private readonly resumedAfter = new Map<string, Place>();
  /** Per session and emitter: the release point its replay read. */
  private readonly released = new Map<string, ReadonlyMap<string, Place>>();
  /** Exact events the replay (or the handoff) gave it: session, source, place. */
  private readonly given = new Set<string>();

  resumeAfter(position: Position): void {
    const current = this.resumedAfter.get(position.session);
    if (current === undefined || comparePositions(position, current) > 0) this.resumedAfter.set(position.session, { epoch: position.epoch, seq: position.seq });
  }

  replayRead(session: string, releasedBySource: ReadonlyMap<string, Place>): void {
    this.released.set(session, releasedBySource);
  }

  gave(event: AepEvent): void {
    const key = givenKey(event);
    if (key !== undefined) this.given.add(key);
  }

  has(event: AepEvent, flags: ArrivalFlags = {}): boolean {
    if (flags.redelivery === true) return false;
    const position = positionOf(event);
    if (position === undefined) return false;
    if (this.given.has(givenKey(event) as string)) return true;
    if (flags.late === true) return false;
    const resumed = this.resumedAfter.get(position.session);
    if (resumed !== undefined && comparePositions(position, resumed) <= 0) return true;
    const released = this.released.get(position.session)?.get(event.source);
    return released !== undefined && comparePositions(position, released) <= 0;
  }
}

function givenKey(event: AepEvent): string | undefined {
  const position = positionOf(event);
  return position === undefined ? undefined : `${position.epoch}:${position.seq}:${event.source.length}:${event.source}:${position.session}`;
}
