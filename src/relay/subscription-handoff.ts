/**
 * The replay-to-live handoff shared by the WebSocket and SSE bindings.
 *
 * A subscription is recorded in state `replaying` before its replay is read; while it
 * replays, fan-out parks matching events on it instead of delivering them. After the replay
 * the binding delivers what was parked and flips the subscription to `live` with a
 * conditional write that fails if more was parked meanwhile (then it delivers those and
 * tries again). So live events follow the replayed ones and none falls in between.
 *
 * Parked events at or below a session's high-water position (the requested resume position
 * or the newest replayed one) were already delivered or precede the resume point, and are
 * skipped rather than sent twice.
 */
import type { CaptureLevel } from '../protocol/levels.ts';
import { comparePositions, positionOf } from '../protocol/positions.ts';
import type { Position } from '../protocol/positions.ts';
import type { ParkingPort } from './ports/parking.ts';
import type { SubscriptionsPort } from './ports/subscriptions.ts';
import { deliveryText, parseStored } from './delivery-text.ts';

/** Per session, the newest position the consumer already has. */
export class HighWater {
  private readonly bySession = new Map<string, Position>();

  raise(position: Position): void {
    const current = this.bySession.get(position.session);
    if (current === undefined || comparePositions(position, current) > 0) this.bySession.set(position.session, position);
  }

  /**
   * The positions to store on the live subscription, at most `limit` sessions (an item holds
   * 400 KB); sessions past the limit are simply not skipped by fan-out (duplicates, never loss).
   */
  snapshot(limit = 100): Record<string, { epoch: number; seq: number }> {
    const snapshot: Record<string, { epoch: number; seq: number }> = {};
    for (const [session, position] of [...this.bySession].slice(0, limit)) snapshot[session] = { epoch: position.epoch, seq: position.seq };
    return snapshot;
  }

  /** Whether the consumer already has this position (a seq-less event has none, and is never covered). */
  covers(position: Position | undefined): boolean {
    if (position === undefined) return false;
    const covered = this.bySession.get(position.session);
    return covered !== undefined && comparePositions(position, covered) <= 0;
  }
}

export interface HandoffRequest {
  tenant: string;
  /** The WebSocket connection id, or the SSE stream's id. */
  connectionId: string;
  subscriptionId: string;
  ceiling: CaptureLevel | undefined;
  highWater: HighWater;
  /** Sends one event text; false when the consumer is gone. */
  deliver: (text: string) => Promise<boolean>;
}

/** Delivers what was parked during the replay, then flips every index entry of the subscription to live. */
export async function handOffToLive(store: { subscriptions: SubscriptionsPort; parking: ParkingPort }, request: HandoffRequest): Promise<boolean> {
  const entries = await store.subscriptions.subscriptionEntries(request.tenant, request.connectionId, request.subscriptionId);
  for (const entry of entries) {
    let delivered = 0;
    let current = entry;
    for (;;) {
      for (const raw of current.pending.slice(delivered)) {
        delivered += 1;
        const event = parseStored(raw);
        if (event === undefined || request.highWater.covers(positionOf(event))) continue;
        if (!(await request.deliver(deliveryText(raw, event, request.ceiling)))) return false;
      }
      if (await store.parking.goLive(current, delivered, request.highWater.snapshot())) break;
      const reread = (await store.subscriptions.subscriptionEntries(request.tenant, request.connectionId, request.subscriptionId)).find(
        (candidate) => candidate.indexKey.pk === entry.indexKey.pk,
      );
      if (reread === undefined) return false;
      current = reread;
    }
  }
  return true;
}
