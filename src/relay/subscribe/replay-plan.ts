/**
 * Replay for any consuming binding (AEP-0003 §5, §7): what a subscription's `from` yields,
 * in order, as binding-neutral steps. The WebSocket binding turns an `exhausted` step into a
 * `replay-exhausted` frame, SSE into a `: replay-exhausted` comment; both deliver `event`
 * steps the same way, so filters and capture ceilings apply identically.
 */
import type { EventMatcher } from '../../protocol/attr-match.ts';
import type { AepEvent } from '../../protocol/event.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { Position } from '../../protocol/positions.ts';
import { positionOf } from '../../protocol/positions.ts';
import type { Place } from '../order/emitter-order.ts';
import { replaySession } from './session-replay.ts';
import type { SessionReplayDeps } from './session-replay.ts';
import type { EventLogPort } from '../ports/event-log.ts';
import { deliveryText, parseStored } from '../domain/delivery-text.ts';

export type ReplayStep =
  | { kind: 'exhausted'; session: string; earliest: { epoch: number; seq: number } }
  /** The release points the session's replay read (per source), before its events. */
  | { kind: 'released'; session: string; released: ReadonlyMap<string, Place> }
  | { kind: 'event'; text: string; type: string; severity?: string; position?: Position; event: AepEvent };

export interface ReplayRequest {
  tenant: string;
  from: 'all' | readonly Position[];
  matches: EventMatcher;
  ceiling?: CaptureLevel;
}

export type ReplayDeps = Omit<SessionReplayDeps, 'eventLog'> & { eventLog: Pick<EventLogPort, 'readWindow' | 'listSessions'> };

const SESSION_PAGE = 100;

export async function* replaySteps(deps: ReplayDeps, request: ReplayRequest): AsyncGenerator<ReplayStep> {
  if (request.from === 'all') {
    // Replay-all: every held session from its earliest served position; no marker (§5 rule 2).
    let cursor: string | undefined;
    do {
      const page = await deps.eventLog.listSessions(request.tenant, SESSION_PAGE, cursor);
      for (const session of page.items) {
        const replay = await replaySession(deps, request.tenant, session);
        yield { kind: 'released', session, released: replay.released };
        yield* matchingSteps(replay.items.map((raw) => ({ raw })), request);
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
    return;
  }
  for (const position of request.from) {
    const replay = await replaySession(deps, request.tenant, position.session, position);
    yield { kind: 'released', session: position.session, released: replay.released };
    const earliest = replay.exhaustedEarliest ?? (replay.lateCut === true ? firstPosition(replay.items) : undefined);
    if (earliest !== undefined) yield { kind: 'exhausted', session: position.session, earliest: { epoch: earliest.epoch, seq: earliest.seq } };
    yield* matchingSteps(replay.items.map((raw) => ({ raw })), request);
  }
}

function firstPosition(items: readonly string[]): Position | undefined {
  for (const raw of items) {
    const event = parseStored(raw);
    const position = event === undefined ? undefined : positionOf(event);
    if (position !== undefined) return position;
  }
  return undefined;
}

/** The stored items a subscription delivers, as event steps: filtered, down-leveled to its ceiling. */
export function* matchingSteps(items: ReadonlyArray<{ raw: string }>, request: Pick<ReplayRequest, 'matches' | 'ceiling'>): Generator<Extract<ReplayStep, { kind: 'event' }>> {
  for (const item of items) {
    const event = parseStored(item.raw);
    if (event === undefined || !request.matches(event)) continue;
    const position = positionOf(event);
    yield {
      kind: 'event',
      event,
      text: deliveryText(item.raw, event, request.ceiling),
      type: event.type,
      ...(event.severity === undefined ? {} : { severity: event.severity }),
      ...(position === undefined ? {} : { position }),
    };
  }
}
