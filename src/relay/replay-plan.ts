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
import type { ReplayResult } from './domain/stored-event.ts';
import type { Clock } from './ports/clock.ts';
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
  /**
   * Wait up to `waitMs` (over the whole replay) for fan-out to finish with what each session
   * held when its replay was first read, so the replay holds it (`ReplayResult.pendingThrough`).
   */
  settle?: ReplaySettle;
}

export interface ReplaySettle {
  waitMs: number;
  now: Clock;
  sleep: (ms: number) => Promise<void>;
}

/** How often a settling replay reads the session's top (one read unit each; fan-out finishes a batch in tens to hundreds of ms). */
const SETTLE_POLL_MS = 50;

const SESSION_PAGE = 100;

export async function* replaySteps(eventLog: EventLogPort, request: ReplayRequest): AsyncGenerator<ReplayStep> {
  // One wait for the whole replay, however many sessions it covers.
  const settleUntil = request.settle === undefined ? undefined : request.settle.now() + request.settle.waitMs;
  const replayOf = (session: string, after?: Position) => settledReplay(eventLog, request, settleUntil, session, after);
  if (request.from === 'all') {
    // Replay-all: every held session from its earliest served position; no marker (§5 rule 2).
    let cursor: string | undefined;
    do {
      const page = await eventLog.listSessions(request.tenant, SESSION_PAGE, cursor);
      for (const session of page.items) {
        const { items } = await replayOf(session);
        yield* matchingSteps(items, request);
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
    return;
  }
  for (const position of request.from) {
    const result = await replayOf(position.session, position);
    if (result.exhaustedEarliest !== undefined) {
      yield { kind: 'exhausted', session: position.session, earliest: { epoch: result.exhaustedEarliest.epoch, seq: result.exhaustedEarliest.seq } };
    }
    yield* matchingSteps(result.items, request);
  }
}

/**
 * One session's replay. With `settle`, when it left events out for fan-out, waits for the
 * session's top to reach the highest of them and reads it again, once: what arrives meanwhile
 * is not waited for (a busy session would never settle), and comes live or on the next read.
 */
async function settledReplay(eventLog: EventLogPort, request: ReplayRequest, deadline: number | undefined, session: string, after?: Position): Promise<ReplayResult> {
  const first = await eventLog.replay(request.tenant, session, after);
  const { settle } = request;
  if (first.pendingThrough === undefined || settle === undefined || deadline === undefined) return first;
  for (;;) {
    const left = deadline - settle.now();
    if (left <= 0) return first;
    await settle.sleep(Math.min(SETTLE_POLL_MS, left));
    const top = await eventLog.sessionTop(request.tenant, session);
    // Order keys of one session compare as strings in session order (`SessionOrderKey`).
    if (top !== null && top >= first.pendingThrough) return eventLog.replay(request.tenant, session, after);
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
