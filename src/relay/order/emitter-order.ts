/**
 * Session order, decided in one place (AEP-0001 §7, AEP-0003 §7): what fan-out releases of one
 * emitter's session, in which order, and what it must record so a resume loses nothing. Pure:
 * it reads a session's order state and a batch of its stream records and answers decisions as
 * data; `order-lane.ts` performs them.
 *
 * One concept carries the guarantee: the **release point** `R`, the highest position released
 * to consumers. Consumers only ever hold positions at or below it (live delivery releases in
 * order up to it; replay serves nothing above it). `R` moves:
 * - onto the next position when that is the one directly after it (same epoch, `seq + 1`; an
 *   epoch's `seq 0` for a session with nothing released);
 * - past a gap only once the event above the gap has been stored for the order wait **and** a
 *   strongly consistent read of the log finds nothing in the gap (what it finds is stored and its
 *   record is on its way, so it is waited for; one whose record never comes within
 *   `adoptAfterMs` is released from the log). The positions passed are a **hole**.
 *
 * So an event whose position `R` passed was not in the log when it passed: it is **late**, and
 * late means exactly that (a record landing in a hole). A late event is delivered when it comes
 * (backfill, AEP-0001 §7.2) and recorded with `above` = `R` at that moment, so a consumer holding
 * any position up to `above` gets it on resume. Every other event below a position a consumer
 * holds reached that consumer's chain of connections in order. A record at or below `R` outside
 * every hole was seen before (a retried or duplicated batch) and releases nothing again.
 *
 * What is delivered is a second point, `D` (`delivered`): everything released in order at or
 * below it reached every subscription of its time, by a batch whose deliveries ended. Every step
 * delivers what lies between what its runner knows delivered and `R` again before its own
 * releases (`order-lane.ts`), so a batch that failed after releasing, ran out of time, or ran
 * beside another invocation of the session (two shards after a partition split) loses nothing:
 * each runner posts one contiguous run of positions to a connection, in order, so whichever copy
 * of an event arrives first arrives in order. Late events not yet known delivered are kept
 * (`pendingLate`) and go out again the same way.
 *
 * A gap delays only its own session: nothing here waits. A held session asks to be woken
 * (`wakeAtMs`); its state write is itself a stream record that brings fan-out back.
 */

/** A place in one emitter's session: `(epoch, seq)`. */
export interface Place {
  epoch: number;
  seq: number;
}

export interface HeldEvent {
  place: Place;
  storedAtMs: number;
}

/** Positions strictly between `after` (null: the session's start) and `before`, passed while absent. */
export interface Hole {
  after: Place | null;
  before: Place;
}

export interface OrderState {
  /** `R`: the highest position released; null before the first. */
  released: Place | null;
  /** Seen above a gap and not released yet, lowest first. */
  held: HeldEvent[];
  /** The newest holes, oldest first (at most `MAX_HOLES`). */
  holes: Hole[];
  /** Holes at or below this were forgotten: a record there is taken as late (duplicates, never a miss). */
  forgotThrough: Place | null;
  /** `D`: everything released in order at or below it is known delivered (null: nothing known). */
  delivered: Place | null;
  /** Late events released and not known delivered, oldest first (at most `MAX_PENDING_LATE`). */
  pendingLate: Place[];
  /** Bumped by every write; a write is conditional on it. */
  version: number;
}

export interface OrderRecord {
  place: Place;
  storedAtMs: number;
}

/** What the log holds in a gap, read strongly consistently (the answer to a `check`). */
export interface GapCheck {
  after: Place | null;
  before: Place;
  found: readonly OrderRecord[];
}

export interface AdvanceInput {
  /** The session's sequenced event records of the batch, in stream order. */
  records: readonly OrderRecord[];
  /** Set when the trigger is the session's own state record (a wake-up), with the version it carried. */
  wake?: { version: number };
  nowMs: number;
  /** How long a gap is waited for, from the moment the event above it was stored. */
  waitMs: number;
  /** A stored event whose record has not come after this long is released from the log. */
  adoptAfterMs: number;
  /** Answers to the checks asked so far in this step. */
  checked?: readonly GapCheck[];
}

export interface Delivery {
  place: Place;
  /** Released after `R` passed it (AEP-0001 §7.2 backfill); resume returns it below higher positions. */
  late: boolean;
}

export interface LateEntry {
  place: Place;
  /** `R` when it came: a consumer holding any position up to this may lack it. */
  above: Place;
}

export type Advance =
  /** Read the log strictly between `after` and `before` and advance again with the answer. */
  | { kind: 'check'; after: Place | null; before: Place }
  | {
      kind: 'advanced';
      next: OrderState;
      /** In the order consumers get them. */
      deliver: Delivery[];
      /** Record these before anything is committed or delivered. */
      late: LateEntry[];
      /** Commit `next` (it changed, or a held session must be woken again). */
      write: boolean;
      /** When held: when the lowest gap is due. */
      wakeAtMs?: number;
    };

/**
 * Holes kept: a record landing in a forgotten one counts as late all the same (`forgotThrough`),
 * so the bound costs duplicates at worst, and keeps the state item (written every batch) small.
 */
export const MAX_HOLES = 8;
/** More held than this and the lowest gap is due at once: the state item stays a few KB. */
export const MAX_HELD = 200;
/** Checks one step may ask; a gap left is taken up at the next wake. */
export const MAX_CHECKS = 8;
/**
 * Late events kept until known delivered. Past it the oldest is forgotten: it went out when it
 * came, and is lost to a live consumer only if that batch's deliveries failed and this many later
 * late events came before any runner finished one (a consumer resuming still gets it, as late).
 */
export const MAX_PENDING_LATE = 16;

export const EMPTY_ORDER_STATE: OrderState = { released: null, held: [], holes: [], forgotThrough: null, delivered: null, pendingLate: [], version: 0 };

export function comparePlaces(a: Place, b: Place): number {
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  return 0;
}

const samePlace = (a: Place | null, b: Place | null) => (a === null || b === null ? a === b : comparePlaces(a, b) === 0);

/**
 * Whether `place` is the one directly after `released`, so nothing can lie between. Before the
 * first release only `(0, 0)` is: a first `seq` 0 of a later epoch may have an earlier epoch's
 * events still on their way (an emitter restarted while its pipelined frames were in flight).
 */
export function follows(released: Place | null, place: Place): boolean {
  if (released === null) return place.epoch === 0 && place.seq === 0;
  return place.epoch === released.epoch && place.seq === released.seq + 1;
}

/**
 * The state with what confirmations say was delivered (`order-lane.ts`, `confirm`): `delivered`
 * raised to the confirmed point, and the late events a confirmation covered no longer pending. A
 * state read back (a wake-up's, another runner's) predates them, and would post them again.
 */
export function withConfirmed(state: OrderState, confirmed: { through: Place | null; late: readonly Place[] }): OrderState {
  const { through } = confirmed;
  const delivered = through === null || (state.delivered !== null && comparePlaces(through, state.delivered) <= 0) ? state.delivered : through;
  const pendingLate = state.pendingLate.filter((place) => !confirmed.late.some((done) => samePlace(done, place)));
  return { ...state, delivered, pendingLate };
}

/** Whether a consumer may be handed this place now: at or below the release point. */
export function isReleased(state: Pick<OrderState, 'released'>, place: Place): boolean {
  return state.released !== null && comparePlaces(place, state.released) <= 0;
}

export function advance(state: OrderState, input: AdvanceInput): Advance {
  // A wake-up written before the newest write is stale: that write brings its own.
  const woken = input.wake !== undefined && input.wake.version === state.version;
  if (input.wake !== undefined && !woken && input.records.length === 0) return { kind: 'advanced', next: state, deliver: [], late: [], write: false };
  const next: OrderState = { ...state, held: [...state.held], holes: [...state.holes] };
  const deliver: Delivery[] = [];
  const late: LateEntry[] = [];
  let changed = false;

  for (const record of input.records) {
    const { place } = record;
    if (isReleased(next, place)) {
      // In a hole: late. Anywhere else at or below `R`: seen before, released already.
      if (takeFromHole(next, place)) {
        late.push({ place, above: next.released as Place });
        deliver.push({ place, late: true });
        changed = true;
      }
      continue;
    }
    if (next.held.some((held) => samePlace(held.place, place))) continue;
    insertHeld(next.held, record);
    changed = true;
  }

  const release = () => {
    const lowest = next.held.shift() as HeldEvent;
    next.released = lowest.place;
    deliver.push({ place: lowest.place, late: false });
    changed = true;
  };
  const checked = input.checked ?? [];
  for (;;) {
    while (next.held.length > 0 && follows(next.released, (next.held[0] as HeldEvent).place)) release();
    const lowest = next.held[0];
    if (lowest === undefined) break;
    // A first `seq` 0 is checked at once: a fresh session waits only for what the log holds below it.
    const due = input.nowMs >= lowest.storedAtMs + input.waitMs || next.held.length > MAX_HELD || (next.released === null && lowest.place.seq === 0);
    if (!due) break;
    const answer = checked.find((check) => samePlace(check.after, next.released) && samePlace(check.before, lowest.place));
    if (answer === undefined) {
      if (checked.length >= MAX_CHECKS) break;
      return { kind: 'check', after: next.released, before: lowest.place };
    }
    const unseen = answer.found.filter((found) => !next.held.some((held) => samePlace(held.place, found.place)));
    if (unseen.length === 0) {
      addHole(next, { after: next.released, before: lowest.place });
      release();
      continue;
    }
    // Stored but not seen: its record is on its way. One that has not come for long is not
    // coming (the mapping discarded it, or started after it): released from the log instead.
    const stale = unseen.filter((found) => input.nowMs >= found.storedAtMs + input.adoptAfterMs);
    if (stale.length === 0) break;
    for (const found of stale) insertHeld(next.held, found);
    changed = true;
  }

  const wakeAtMs = next.held[0] === undefined ? undefined : Math.max(input.nowMs, next.held[0].storedAtMs + input.waitMs);
  return { kind: 'advanced', next, deliver, late, write: changed || next.held.length > 0, ...(wakeAtMs === undefined ? {} : { wakeAtMs }) };
}

function insertHeld(held: HeldEvent[], event: HeldEvent): void {
  let index = held.length;
  while (index > 0 && comparePlaces((held[index - 1] as HeldEvent).place, event.place) > 0) index -= 1;
  held.splice(index, 0, { place: event.place, storedAtMs: event.storedAtMs });
}

function addHole(state: OrderState, hole: Hole): void {
  if (isEmpty(hole)) return;
  state.holes.push(hole);
  while (state.holes.length > MAX_HOLES) {
    const forgotten = state.holes.shift() as Hole;
    if (state.forgotThrough === null || comparePlaces(forgotten.before, state.forgotThrough) > 0) state.forgotThrough = forgotten.before;
  }
}

function isEmpty(hole: Hole): boolean {
  return hole.after === null ? hole.before.seq === 0 && hole.before.epoch === 0 : hole.after.epoch === hole.before.epoch && hole.after.seq + 1 >= hole.before.seq;
}

/** Whether `place` lies in a hole (taking it out) or below what was forgotten. */
function takeFromHole(state: OrderState, place: Place): boolean {
  const index = state.holes.findIndex((hole) => (hole.after === null || comparePlaces(hole.after, place) < 0) && comparePlaces(place, hole.before) < 0);
  if (index === -1) return state.forgotThrough !== null && comparePlaces(place, state.forgotThrough) <= 0;
  const hole = state.holes[index] as Hole;
  const parts = [
    { after: hole.after, before: place },
    { after: place, before: hole.before },
  ].filter((part) => !isEmpty(part));
  state.holes.splice(index, 1, ...parts);
  return true;
}
