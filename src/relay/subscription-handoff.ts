/**
 * The replay-to-live handoff shared by the WebSocket and SSE bindings.
 *
 * A subscription is recorded in state `replaying` before its replay is read; while it
 * replays, fan-out parks matching events on it instead of delivering them. After the replay
 * the binding delivers what was parked and flips the subscription to `live` with a
 * conditional write that fails if more was parked meanwhile (then it delivers those and
 * tries again). So live events follow the replayed ones and none falls in between.
 *
 * A parked event is skipped when the consumer has that very position (one the replay
 * delivered), or when fan-out saw it stored in order and it lies at or below the highest
 * position the opening left the consumer with (`DeliveredPositions.covers`). An event below that
 * position stored late (after a higher one, AEP-0001 §7.2 backfill) may be new to the consumer,
 * so it is delivered; at worst that is a duplicate, which consumers drop by `(source, id)`.
 */
import { comparePositions, positionOf } from '../protocol/positions.ts';
import type { Position } from '../protocol/positions.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { AepEvent } from '../protocol/event.ts';
import type { ParkedEvent, StoredSubscription } from './domain/subscription.ts';
import type { ParkingPort } from './ports/parking.ts';
import type { SubscriptionsPort } from './ports/subscriptions.ts';
import { deliveryText, parseStored } from './delivery-text.ts';

/**
 * What a subscription's opening gave the consumer: every position its replay (or catch-up read)
 * delivered, and per session the highest position it holds (its resume point or the newest
 * replayed one), which fan-out may skip up to for events not stored late (`delivery-plan.ts`).
 */
export class DeliveredPositions {
  private readonly held = new Set<string>();
  private readonly highest = new Map<string, Position>();

  /** A resume position: the consumer holds it (and what it implies), though this opening sent nothing. */
  raise(position: Position): void {
    const current = this.highest.get(position.session);
    if (current === undefined || comparePositions(position, current) > 0) this.highest.set(position.session, position);
  }

  add(position: Position): void {
    this.held.add(heldKey(position));
    this.raise(position);
  }

  /**
   * A position the handoff delivered (parked, or a stream's catch-up read, which takes only the
   * newest events): the consumer has this one, not everything below it.
   */
  hold(position: Position): void {
    this.held.add(heldKey(position));
  }

  /**
   * Whether the consumer holds every event stored in order up to this position: it is at or
   * below the highest position of its session the opening left it with (a resume point, or
   * the newest replayed: a replay serves every event at or below the session's top within its
   * window, so an in-order one below a replayed position was served or lies before the window).
   */
  covers(position: Position | undefined): boolean {
    if (position === undefined) return false;
    const highest = this.highest.get(position.session);
    return highest !== undefined && comparePositions(position, highest) <= 0;
  }

  /** Whether the consumer was given this very position (a seq-less event has none, and never is). */
  has(position: Position | undefined): boolean {
    return position !== undefined && this.held.has(heldKey(position));
  }

  /**
   * The highest positions to store on the live subscription, at most `limit` sessions (an item
   * holds 400 KB); sessions past the limit are simply not skipped by fan-out (duplicates, never loss).
   */
  snapshot(limit = 100): Record<string, { epoch: number; seq: number }> {
    const snapshot: Record<string, { epoch: number; seq: number }> = {};
    for (const [session, position] of [...this.highest].slice(0, limit)) snapshot[session] = { epoch: position.epoch, seq: position.seq };
    return snapshot;
  }
}

function heldKey(position: Position): string {
  return `${position.epoch}:${position.seq}:${position.session}`;
}

export interface HandoffRequest {
  tenant: string;
  /** The WebSocket connection id, or the SSE stream's id. */
  connectionId: string;
  subscriptionId: string;
  ceiling: CaptureLevel | undefined;
  delivered: DeliveredPositions;
  /** Sends one event text; false when the consumer is gone. */
  deliver: (text: string) => Promise<boolean>;
  /** Matching events read from the log to deliver with the parked ones (a stream's catch-up). */
  alsoDeliver?: readonly ParkedEvent[];
}

/**
 * Delivers what was parked during the replay on every index entry of the subscription (and
 * `alsoDeliver`), merged in position order, then flips all the entries to live at once. One
 * entry flipped before another's parked events were out would send its live events first, and
 * some of those may be above an event still parked: a consumer dropping in between would resume
 * past it.
 */
export async function handOffToLive(store: { subscriptions: SubscriptionsPort; parking: ParkingPort }, request: HandoffRequest): Promise<boolean> {
  const drained = new Map<string, number>();
  let toDeliver: ParkedEvent[] = [...(request.alsoDeliver ?? [])];
  for (;;) {
    const entries = (await store.subscriptions.subscriptionEntries(request.tenant, request.connectionId, request.subscriptionId)).filter((entry) => entry.state === 'replaying');
    // Entries that were replaying a moment ago and are gone: the subscription or connection went away.
    if (entries.length === 0 && drained.size > 0) return false;
    for (const entry of entries) {
      const taken = drained.get(entryKey(entry)) ?? 0;
      toDeliver.push(...entry.pending.slice(taken));
      drained.set(entryKey(entry), entry.pending.length);
    }
    for (const { parked, event, position } of inDeliveryOrder(toDeliver)) {
      if (request.delivered.has(position)) continue;
      if (parked.inOrder && request.delivered.covers(position)) continue;
      if (!(await request.deliver(deliveryText(parked.raw, event, request.ceiling)))) return false;
      if (position !== undefined) request.delivered.hold(position);
    }
    toDeliver = [];
    if (entries.length === 0) return true;
    if (await store.parking.goLive(entries.map((entry) => ({ subscription: entry, drained: drained.get(entryKey(entry)) ?? 0 })), request.delivered.snapshot())) return true;
  }
}

function entryKey(entry: StoredSubscription): string {
  return `${entry.indexKey.pk}\u0000${entry.indexKey.sk}`;
}

/**
 * Sequenced events by session and position (a consumer that drops part way then holds no
 * position above one it lacks among them), then seq-less ones in the order they came.
 */
function inDeliveryOrder(parkedEvents: readonly ParkedEvent[]): Array<{ parked: ParkedEvent; event: AepEvent; position?: Position }> {
  const sequenced: Array<{ parked: ParkedEvent; event: AepEvent; position: Position }> = [];
  const seqLess: Array<{ parked: ParkedEvent; event: AepEvent }> = [];
  for (const parked of parkedEvents) {
    const event = parseStored(parked.raw);
    if (event === undefined) continue;
    const position = positionOf(event);
    if (position === undefined) seqLess.push({ parked, event });
    else sequenced.push({ parked, event, position });
  }
  sequenced.sort((a, b) => (a.position.session < b.position.session ? -1 : a.position.session > b.position.session ? 1 : comparePositions(a.position, b.position)));
  return [...sequenced, ...seqLess];
}
