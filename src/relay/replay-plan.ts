/**
 * Replay for any consuming binding (AEP-0003 §5, §7): what a subscription's `from` yields,
 * in order, as binding-neutral steps. The WebSocket binding turns an `exhausted` step into a
 * `replay-exhausted` frame, SSE into a `: replay-exhausted` comment; both deliver `event`
 * steps the same way, so filters and capture ceilings apply identically.
 */
import type { EventMatcher } from '../protocol/attr-match.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { Position } from '../protocol/positions.ts';
import { positionOf } from '../protocol/positions.ts';
import type { EventLogPort } from './ports/event-log.ts';
import { deliveryText, parseStored } from './delivery-text.ts';

export type ReplayStep =
  | { kind: 'exhausted'; session: string; earliest: { epoch: number; seq: number } }
  | { kind: 'event'; text: string; type: string; severity?: string; position?: Position };

export interface ReplayRequest {
  tenant: string;
  from: 'all' | readonly Position[];
  matches: EventMatcher;
  ceiling?: CaptureLevel;
}

const SESSION_PAGE = 100;

export async function* replaySteps(eventLog: EventLogPort, request: ReplayRequest): AsyncGenerator<ReplayStep> {
  if (request.from === 'all') {
    // Replay-all: every held session from its earliest served position; no marker (§5 rule 2).
    let cursor: string | undefined;
    do {
      const page = await eventLog.listSessions(request.tenant, SESSION_PAGE, cursor);
      for (const session of page.items) {
        const { items } = await eventLog.replay(request.tenant, session);
        yield* matchingSteps(items, request);
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
    return;
  }
  for (const position of request.from) {
    const result = await eventLog.replay(request.tenant, position.session, position);
    if (result.exhaustedEarliest !== undefined) {
      yield { kind: 'exhausted', session: position.session, earliest: { epoch: result.exhaustedEarliest.epoch, seq: result.exhaustedEarliest.seq } };
    }
    yield* matchingSteps(result.items, request);
  }
}

/** The stored items a subscription delivers, as event steps: filtered, down-leveled to its ceiling. */
export function* matchingSteps(items: ReadonlyArray<{ raw: string }>, request: Pick<ReplayRequest, 'matches' | 'ceiling'>): Generator<Extract<ReplayStep, { kind: 'event' }>> {
  for (const item of items) {
    const event = parseStored(item.raw);
    if (event === undefined || !request.matches(event)) continue;
    const position = positionOf(event);
    yield {
      kind: 'event',
      text: deliveryText(item.raw, event, request.ceiling),
      type: event.type,
      ...(event.severity === undefined ? {} : { severity: event.severity }),
      ...(position === undefined ? {} : { position }),
    };
  }
}
