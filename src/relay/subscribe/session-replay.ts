/**
 * One session's replay (AEP-0003 §5, §7), under the rule the order rests on: serve nothing above
 * an emitter's release point (`emitter-order.ts`). What lies above it, fan-out releases after
 * this read, so after the subscription was recorded: live, or parked for the handoff.
 *
 * A resume token names a bare session (AEP-0001 §5.2 accepts the ambiguity), so a replay serves
 * every emitter's events of the name: in `(epoch, seq)` order, emitters at one position ordered
 * by their source's digest, seq-less events (commands) after the position they arrived at. A
 * resume after `P` also serves first, in the same order, the late events below `P` recorded with
 * `above` at or above `P`: what a consumer holding `P` may lack.
 *
 * Replay serves the newest `window` events after `P`; when more lie after it, it says where the
 * served window starts (`replay-exhausted`). Late events are served on top of that window; a
 * late list longer than the window is cut to its newest `window` entries and the cut is said
 * (`lateCut`), since a consumer cannot tell it from the exhausted case otherwise.
 */
import { comparePositions, isBeforeFirst, positionOf } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
import { parseStored } from '../domain/delivery-text.ts';
import type { WindowItem } from '../domain/stored-event.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventLogPort } from '../ports/event-log.ts';
import type { SessionOrderPort } from '../ports/session-order.ts';
import type { Place } from '../order/emitter-order.ts';

export interface SessionReplayDeps {
  eventLog: Pick<EventLogPort, 'readWindow'>;
  sessionOrder: Pick<SessionOrderPort, 'releasedPoints' | 'lateBelow'>;
  /** How many events after the requested position a replay serves. */
  window: number;
  /** Wait for fan-out to release what the session held when the replay began, until this time (ms). */
  settleUntilMs?: number;
  now: Clock;
  sleep: (ms: number) => Promise<void>;
}

export interface SessionReplay {
  items: string[];
  /** The requested position predates the served window: where it starts. */
  exhaustedEarliest?: Position;
  /** The late list was longer than the window and was cut to its newest entries. */
  lateCut?: true;
  /** The release points this replay read, per source (the handoff's `Opening`). */
  released: ReadonlyMap<string, Place>;
}

/** How often a settling replay reads the release points (fan-out finishes a batch in tens to hundreds of ms). */
const SETTLE_POLL_MS = 50;

export async function replaySession(deps: SessionReplayDeps, tenant: string, session: string, after?: Position): Promise<SessionReplay> {
  const from = after === undefined || isBeforeFirst(after) ? undefined : after;
  let released = await deps.sessionOrder.releasedPoints(tenant, session);
  let read = placedOf(await deps.eventLog.readWindow(tenant, session, from, deps.window + 1));
  // What the session held when the replay began is in it, unless fan-out lags past the wait.
  if (deps.settleUntilMs !== undefined && read.some((item) => !servable(released, item))) {
    while (deps.now() < deps.settleUntilMs) {
      await deps.sleep(Math.min(SETTLE_POLL_MS, deps.settleUntilMs - deps.now()));
      released = await deps.sessionOrder.releasedPoints(tenant, session);
      if (read.every((item) => servable(released, item))) break;
    }
    read = placedOf(await deps.eventLog.readWindow(tenant, session, from, deps.window + 1));
  }
  const served = read.filter((item) => servable(released, item));
  const window = served.slice(-deps.window);
  const late = from === undefined ? [] : await deps.sessionOrder.lateBelow(tenant, session, from);
  const inWindow = new Set(window.map((item) => item.raw));
  const lateServed = late.filter((raw) => !inWindow.has(raw));
  const result: SessionReplay = { items: [...lateServed.slice(-deps.window), ...window.map((item) => item.raw)], released };
  if (lateServed.length > deps.window) result.lateCut = true;
  const earliest = window[0];
  if (from !== undefined && read.length > deps.window && earliest !== undefined) {
    const position = earliest.anchor;
    result.exhaustedEarliest = { session, epoch: position?.epoch ?? 0, seq: position?.seq ?? 0 };
  }
  return result;
}

/** A read item with what servability asks of it, parsed once: the emitter of a sequenced event (none for a seq-less one), and where it stands. */
interface PlacedItem {
  raw: string;
  emitter: string | undefined;
  anchor: Place | null;
}

/** Unreadable stored texts are left out (no replay serves them). */
function placedOf(items: readonly WindowItem[]): PlacedItem[] {
  return items.flatMap((item) => {
    const event = parseStored(item.raw);
    if (event === undefined) return [];
    const position = positionOf(event);
    return [position === undefined ? { raw: item.raw, emitter: undefined, anchor: item.anchor } : { raw: item.raw, emitter: event.source, anchor: { epoch: position.epoch, seq: position.seq } }];
  });
}

/** At or below its emitter's release point; a seq-less event, at or below some emitter's. */
function servable(released: ReadonlyMap<string, Place>, item: PlacedItem): boolean {
  const { anchor } = item;
  if (item.emitter !== undefined) {
    const point = released.get(item.emitter);
    return point !== undefined && anchor !== null && comparePositions(anchor, point) <= 0;
  }
  return [...released.values()].some((point) => anchor === null || comparePositions(anchor, point) <= 0);
}
