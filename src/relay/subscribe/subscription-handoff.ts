/**
 * The replay-to-live handoff shared by the WebSocket and SSE bindings.
 *
 * A subscription is recorded in state `replaying` before its replay is read; while it
 * replays, fan-out parks matching events on it instead of delivering them. After the replay
 * the binding delivers what was parked and flips the subscription to `live` with a
 * conditional write that fails if more was parked meanwhile (then it delivers those and
 * tries again). So live events follow the replayed ones and none falls in between.
 *
 * A parked event is skipped when the opening already gave it to the consumer
 * (`order/consumer-has.ts`, the one rule for that); anything else goes, so at worst a
 * duplicate, which consumers drop by `(source, id)`.
 */
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
import type { Opening } from '../order/consumer-has.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { AepEvent } from '../../protocol/event.ts';
import type { ParkedEvent, StoredSubscription } from '../domain/subscription.ts';
import type { ParkingPort } from '../ports/parking.ts';
import type { SubscriptionsPort } from '../ports/subscriptions.ts';
import { deliveryText, parseStored } from '../domain/delivery-text.ts';

export interface HandoffRequest {
  tenant: string;
  /** The WebSocket connection id, or the SSE stream's id. */
  connectionId: string;
  subscriptionId: string;
  ceiling: CaptureLevel | undefined;
  opening: Opening;
  /** Sends one event text; false when the consumer is gone. */
  deliver: (text: string) => Promise<boolean>;
}

/** The subscription was removed while it opened: by its consumer's own `unsubscribe` (a frame run beside the subscribe), or with the connection. */
export const SUBSCRIPTION_GONE = 'subscription-gone';

/**
 * Delivers what was parked during the replay on every index entry of the subscription,
 * merged in position order, then flips all the entries to live at once. One
 * entry flipped before another's parked events were out would send its live events first, and
 * some of those may be above an event still parked: a consumer dropping in between would resume
 * past it. Answers true once live; false when a delivery was refused (the consumer is gone, or
 * stopped reading); `SUBSCRIPTION_GONE` when the subscription went away meanwhile.
 */
export async function handOffToLive(store: { subscriptions: SubscriptionsPort; parking: ParkingPort }, request: HandoffRequest): Promise<boolean | typeof SUBSCRIPTION_GONE> {
  const drained = new Map<string, number>();
  let toDeliver: ParkedEvent[] = [];
  for (;;) {
    const entries = (await store.subscriptions.subscriptionEntries(request.tenant, request.connectionId, request.subscriptionId)).filter((entry) => entry.state === 'replaying');
    // Entries that were replaying a moment ago and are gone: the subscription or connection went away.
    if (entries.length === 0 && drained.size > 0) return SUBSCRIPTION_GONE;
    for (const entry of entries) {
      const taken = drained.get(entryKey(entry)) ?? 0;
      toDeliver.push(...entry.pending.slice(taken));
      drained.set(entryKey(entry), entry.pending.length);
    }
    for (const { parked, event } of inDeliveryOrder(toDeliver)) {
      if (request.opening.has(event, parked)) continue;
      if (!(await request.deliver(deliveryText(parked.raw, event, request.ceiling)))) return false;
      request.opening.gave(event);
    }
    toDeliver = [];
    if (entries.length === 0) return true;
    if (await store.parking.goLive(entries.map((entry) => ({ subscription: entry, drained: drained.get(entryKey(entry)) ?? 0 })))) return true;
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
