/**
 * Live delivery of a session in `(epoch, seq)` order (AEP-0001 §7), though its events may be
 * stored out of order: API Gateway runs a connection's frames concurrently, so an emitter's
 * pipelined 0, 1, 2, 3, 4 can reach the log (and the stream) as 1, 0, 2, 4, 3.
 *
 * Per session, in one batch:
 * 1. Its sequenced events are sorted and take, in that order, the places its sequenced events
 *    held in the batch (seq-less events such as commands, and redeliveries, keep theirs).
 * 2. When positions are missing between the last one released and the next (same epoch), the
 *    log is read for them, again until they are all there or `orderWaitMs` has passed since the
 *    next one was stored. Gaps are legal (an emitter may skip), so the wait is bounded; it is
 *    spent only on a fresh event, so a lagging stream does not wait at all. What the read finds
 *    (stored, but its stream record not here yet) is delivered first, as a gap fill.
 * 3. When a gap fill's own stream record arrives later, the connections that already got it are
 *    skipped; any other (a subscription opened since) gets it.
 * An event stored more than `orderWaitMs` after its successor is delivered when its record
 * arrives, below positions already delivered: backfill, which consumers order by position
 * (AEP-0001 §7.2), and which resume still returns (`late-arrivals.ts`).
 *
 * State is this container's memory only (bounded): a container meeting a session for the first
 * time looks at the few positions stored just below the first event it sees. Order is a
 * promise about live delivery; no-loss does not depend on any of this.
 */
import { BoundedMap } from '../../protocol/bounded-collections.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
import { parseStored } from '../delivery-text.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import { sessionTopKey } from '../domain/history.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventLogPort } from '../ports/event-log.ts';
import type { ConnectionPlan } from './delivery-plan.ts';

const REMEMBERED_SESSIONS = 50_000;
const REMEMBERED_FILLS = 100_000;
/** The most positions one gap read asks for; a wider gap is an emitter's, not reordering. */
const GAP_READ_LIMIT = 100;
/** How far below its first event a container looks when it meets a session. */
const FIRST_LOOK = 10;
const POLL_MS = 20;

export interface SequencerDependencies {
  eventLog: Pick<EventLogPort, 'storedBetween'>;
  now: Clock;
  orderWaitMs: number;
  sleep?: (ms: number) => Promise<void>;
}

interface Sequenced {
  deliverable: Deliverable;
  position: Position;
}

export class SessionSequencer {
  /** Per session, the highest position released (delivered live) by this container. */
  private readonly released = new BoundedMap<string, Position>(REMEMBERED_SESSIONS);
  /** Per gap-filled event, the connections that got it before its own record arrived. */
  private readonly filled = new BoundedMap<string, ReadonlySet<string>>(REMEMBERED_FILLS);
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: SequencerDependencies) {
    this.sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * One tenant's deliverables in delivery order, gap fills inserted. `freshSessions`: sessions
   * fan-out had handled nothing of before this batch, so every position below their first
   * event here is still to come (no guess from the log is needed).
   */
  async order(tenant: string, deliverables: readonly Deliverable[], freshSessions: ReadonlySet<string> = new Set()): Promise<Deliverable[]> {
    const bySession = new Map<string, Sequenced[]>();
    for (const deliverable of deliverables) {
      const position = sequencedPosition(deliverable);
      if (position === undefined) continue;
      const members = bySession.get(position.session);
      if (members === undefined) bySession.set(position.session, [{ deliverable, position }]);
      else members.push({ deliverable, position });
    }
    const chunks = new Map<string, Deliverable[][]>();
    await Promise.all([...bySession].map(async ([session, members]) => chunks.set(session, await this.orderSession(tenant, session, members, freshSessions.has(session)))));
    // Each sequenced place of a session takes that session's next chunk: gap fills, then one event.
    const ordered: Deliverable[] = [];
    for (const deliverable of deliverables) {
      const position = sequencedPosition(deliverable);
      const chunk = position === undefined ? undefined : chunks.get(position.session)?.shift();
      ordered.push(...(chunk ?? [deliverable]));
    }
    return ordered;
  }

  /** The connections that already got this event as a gap fill (skip them), if any. */
  alreadyGiven(deliverable: Deliverable): ReadonlySet<string> | undefined {
    if (deliverable.kind !== 'event' || deliverable.gapFill === true) return undefined;
    const key = fillKey(deliverable);
    return key === undefined ? undefined : this.filled.get(key);
  }

  /** After planning: who got each gap fill; an arrival whose fill was accounted for is forgotten. */
  remember(deliverables: readonly Deliverable[], plans: Iterable<ConnectionPlan>): void {
    // Most batches fill no gap and owe nothing: skip the walk over every planned delivery.
    const anyFill = deliverables.some((deliverable) => deliverable.gapFill === true);
    if (!anyFill && this.filled.size === 0) return;
    const given = new Map<Deliverable, Set<string>>();
    for (const plan of anyFill ? plans : []) {
      for (const action of plan.actions) {
        if (action.kind === 'retry-closing' || action.deliverable.gapFill !== true) continue;
        const set = given.get(action.deliverable) ?? new Set<string>();
        set.add(plan.connectionId);
        given.set(action.deliverable, set);
      }
    }
    for (const deliverable of deliverables) {
      const key = fillKey(deliverable);
      if (key === undefined) continue;
      if (deliverable.gapFill === true) this.filled.set(key, given.get(deliverable) ?? new Set());
      else this.filled.delete(key);
    }
  }

  private async orderSession(tenant: string, session: string, members: readonly Sequenced[], fresh: boolean): Promise<Deliverable[][]> {
    const sessionKey = sessionTopKey(tenant, session);
    const sorted = [...members].sort((left, right) => comparePositions(left.position, right.position));
    const first = sorted[0]!;
    let last = this.released.get(sessionKey) ?? (fresh ? beforeEpochStart(first.position) : await this.firstLook(tenant, first));
    const chunks: Deliverable[][] = [];
    for (const member of sorted) {
      if (last !== undefined && comparePositions(member.position, last) <= 0) {
        // Below what was released already: backfill (or a retried record), delivered as it is.
        chunks.push([member.deliverable]);
        continue;
      }
      const fills = last === undefined ? [] : await this.fillGap(tenant, last, member);
      chunks.push([...fills, member.deliverable]);
      last = member.position;
    }
    if (last !== undefined) {
      this.released.delete(sessionKey);
      this.released.set(sessionKey, last);
    }
    return chunks;
  }

  /**
   * Where a container meeting a session starts: the highest of the few positions just below its
   * first event that were stored before it (already through the stream); the start of the epoch
   * when there are none; unknown (no wait) when all of those few were stored after it.
   */
  private async firstLook(tenant: string, first: Sequenced): Promise<Position | undefined> {
    const below = await this.deps.eventLog.storedBetween(tenant, first.position.session, undefined, first.position, FIRST_LOOK, true);
    const firstStoredAt = first.deliverable.storedAtMs ?? this.deps.now();
    for (const stored of below) {
      const position = positionOfStored(stored);
      if (position !== undefined && (stored.storedAtMs ?? 0) < firstStoredAt) return position;
    }
    return below.length < FIRST_LOOK ? beforeEpochStart(first.position) : undefined;
  }

  /** The events stored between `last` and `member` that the stream has not brought yet, waiting a bounded time for missing ones. */
  private async fillGap(tenant: string, last: Position, member: Sequenced): Promise<Deliverable[]> {
    const { position, deliverable } = member;
    if (this.deps.orderWaitMs <= 0 || last.epoch !== position.epoch || position.seq <= last.seq + 1) return [];
    const missing = Math.min(position.seq - last.seq - 1, GAP_READ_LIMIT);
    const memberStoredAt = deliverable.storedAtMs ?? this.deps.now();
    const deadline = memberStoredAt + this.deps.orderWaitMs;
    let between: StoredEvent[];
    for (;;) {
      between = await this.deps.eventLog.storedBetween(tenant, position.session, last, position, missing);
      const remaining = deadline - this.deps.now();
      if (between.length >= missing || remaining <= 0) break;
      await this.sleep(Math.min(POLL_MS, remaining));
    }
    // Nothing between the last released position and `member` was released by this container
    // (this batch's own events between them come first in sorted order), so all of it is new
    // here; only a container that took over a shard mid-burst may send some twice (legal).
    const fills: Deliverable[] = [];
    for (const stored of between) {
      const event = parseStored(stored.raw);
      if (event === undefined) continue;
      const fill: Deliverable = { recordId: deliverable.recordId, tenant, raw: stored.raw, event, kind: 'event', order: stored.order, gapFill: true, ...(stored.storedAtMs === undefined ? {} : { storedAtMs: stored.storedAtMs }) };
      const key = fillKey(fill);
      if (key !== undefined && this.filled.has(key)) continue;
      fills.push(fill);
    }
    return fills;
  }
}

function beforeEpochStart(position: Position): Position {
  return { session: position.session, epoch: position.epoch, seq: -1 };
}

function sequencedPosition(deliverable: Deliverable): Position | undefined {
  return deliverable.kind === 'event' && deliverable.gapFill !== true ? positionOf(deliverable.event) : undefined;
}

function positionOfStored(stored: StoredEvent): Position | undefined {
  const event = parseStored(stored.raw);
  return event === undefined ? undefined : positionOf(event);
}

function fillKey(deliverable: Deliverable): string | undefined {
  const session = deliverable.event.session;
  return session === undefined || deliverable.order === undefined ? undefined : `${sessionTopKey(deliverable.tenant, session)}\u0000${deliverable.order.key}`;
}
