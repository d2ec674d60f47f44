/**
 * Fan-out's side of session order: runs `advance` for one emitter's session per stream batch
 * and performs its decisions through the one port, in the order the guarantee needs
 * (docs/architecture.md, "Session order"): gap checks (strongly consistent log reads), then the late entries, then the
 * state commit, and only then (in `fanout.ts`) the subscription read and the deliveries. So a
 * subscription recorded before that read gets the released events live, and one recorded
 * after it replays them (replay serves up to the committed release point).
 *
 * Each step delivers, before its own releases, what lies between what is known delivered
 * (`delivered`, raised by `confirm` once a batch's deliveries have ended) and the release point
 * it found. Normally that is nothing: each event goes out once. A retry after a failure, a
 * batch that ran beside another (a second shard after a partition split, a timed-out invocation
 * still posting) delivers the unconfirmed run again (duplicates, in order), never less.
 *
 * The state is cached per container; every commit is conditional on the version, and a stale
 * cache is corrected by the refusal's answer, so concurrent or out-of-date containers cost a
 * retry, never a wrong decision.
 */
import { BoundedMap } from '../../protocol/bounded-collections.ts';
import type { Clock } from '../ports/clock.ts';
import type { EmitterSession, SessionOrderPort } from '../ports/session-order.ts';
import { advance, comparePlaces, MAX_PENDING_LATE, withConfirmed } from '../order/emitter-order.ts';
import type { Advance, GapCheck, Hole, OrderRecord, OrderState, Place } from '../order/emitter-order.ts';

const CACHED_SESSIONS = 50_000;
const COMMIT_ATTEMPTS = 3;

export interface OrderLaneDeps {
  order: SessionOrderPort;
  now: Clock;
  /** `AEP_ORDER_WAIT_MS`: how long a gap is waited for. */
  waitMs: number;
  /** After this long a stored event whose stream record never came is released from the log. */
  adoptAfterMs: number;
  /** The most of the emitter's events one gap check reads (a wider gap is an emitter's skip, its contents beyond this are met later); default 100. */
  gapReadLimit?: number;
}

/** One of this batch's sequenced events of the session, with its stored text. */
export interface LaneRecord extends OrderRecord {
  raw: string;
}

/** An event to deliver, in order: its text, and whether it is late (`Delivery.late`). */
export interface LaneRelease {
  raw: string;
  late: boolean;
}

/** What one step delivers, and what to confirm once those deliveries have ended. */
export interface LaneStep {
  key: EmitterSession;
  releases: LaneRelease[];
  /** The release point the deliveries run up to. */
  through: Place | null;
  /** The late events among them. */
  late: Place[];
}

export class OrderLane {
  private readonly cache = new BoundedMap<string, OrderState>(CACHED_SESSIONS);

  constructor(private readonly deps: OrderLaneDeps) {}

  /**
   * One emitter's session through one batch (its records, and/or a wake-up carrying the state it
   * was written with): what to deliver, in order. Throws when it could not check, record or
   * commit; the batch is then retried.
   */
  async step(key: EmitterSession, records: readonly LaneRecord[], wake?: OrderState): Promise<LaneStep> {
    const id = idOf(key);
    let state = this.cache.get(id);
    // A wake-up's state, or the one a refused commit answers, was written before the latest
    // confirmation perhaps (`confirm`): `delivered` is read from where confirmations go.
    if (wake !== undefined && (state === undefined || wake.version > state.version)) state = await this.withDelivered(key, wake);
    state ??= await this.deps.order.load(key);
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.decide(key, state, records, wake === undefined ? undefined : { version: wake.version });
      const again = { after: state.delivered, through: state.released, late: state.pendingLate, holes: state.holes };
      if (!result.write) return this.stepOf(key, result, records, again);
      const next: OrderState = { ...result.next, pendingLate: [...state.pendingLate, ...result.late.map((entry) => entry.place)].slice(-MAX_PENDING_LATE) };
      await this.deps.order.recordLate(key, result.late);
      const outcome = await this.deps.order.commit(key, state.version, next, result.wakeAtMs);
      if (outcome.ok) {
        this.cache.set(id, { ...next, version: state.version + 1 });
        return this.stepOf(key, result, records, again);
      }
      this.cache.delete(id);
      if (attempt >= COMMIT_ATTEMPTS) throw new Error(`order state of ${key.session} kept changing under this batch`);
      state = await this.withDelivered(key, outcome.current);
    }
  }

  /**
   * The step's deliveries have ended (every one posted, parked, dropped, or its consumer
   * disconnected): they are known delivered from now on, for every runner. A confirmation that
   * could not be written costs duplicates later, never a miss.
   */
  async confirm(step: LaneStep): Promise<void> {
    if (step.releases.length === 0 || step.through === null) return;
    const id = idOf(step.key);
    const cached = this.cache.get(id);
    if (cached !== undefined) this.cache.set(id, withConfirmed(cached, { through: step.through, late: step.late }));
    await this.deps.order.confirmDelivered(step.key, step.through, step.late);
  }

  private async withDelivered(key: EmitterSession, state: OrderState): Promise<OrderState> {
    return withConfirmed(state, await this.deps.order.confirmedDelivery(key));
  }

  /**
   * Whether the place is known delivered: a redelivery (a retransmit forwarded as received,
   * AEP-0003 §5) of a place above it is left out, since the run that delivers the original is
   * still to come or still going, and a copy posted beside it could overtake the events below it.
   * A cached answer only ever says yes.
   */
  async isDelivered(key: EmitterSession, place: Place): Promise<boolean> {
    const cached = this.cache.get(idOf(key))?.delivered;
    if (cached !== undefined && cached !== null && comparePlaces(place, cached) <= 0) return true;
    const confirmed = (await this.deps.order.confirmedDelivery(key)).through;
    return confirmed !== null && comparePlaces(place, confirmed) <= 0;
  }

  private async decide(key: EmitterSession, state: OrderState, records: readonly LaneRecord[], wake: { version: number } | undefined): Promise<Extract<Advance, { kind: 'advanced' }>> {
    const checked: GapCheck[] = [];
    for (;;) {
      const result = advance(state, { records, ...(wake === undefined ? {} : { wake }), nowMs: this.deps.now(), waitMs: this.deps.waitMs, adoptAfterMs: this.deps.adoptAfterMs, checked });
      if (result.kind === 'advanced') return result;
      checked.push({ after: result.after, before: result.before, found: await this.deps.order.storedBetween(key, result.after, result.before, this.deps.gapReadLimit ?? 100) });
    }
  }

  /**
   * The step's deliveries, in order: the run from what is known delivered to the release point
   * found (read from the log) with the late events not known delivered each in its place, then
   * this step's releases (this batch's records, else read from the log: held, adopted).
   */
  private async stepOf(key: EmitterSession, result: Extract<Advance, { kind: 'advanced' }>, records: readonly LaneRecord[], again: Again): Promise<LaneStep> {
    const inBatch = new Map(records.map((record) => [placeId(record.place), record.raw]));
    const lateNow = new Set([...again.late, ...result.late.map((entry) => entry.place)].map(placeId));
    const missing = result.deliver.filter((delivery) => !inBatch.has(placeId(delivery.place))).map((delivery) => delivery.place);
    const wanted = [...again.late, ...missing];
    const runs = again.through !== null && (again.after === null || comparePlaces(again.after, again.through) < 0);
    const [atPlaces, inRange] = await Promise.all([wanted.length === 0 ? [] : this.deps.order.eventsAt(key, wanted), runs ? this.deps.order.eventsIn(key, again.after, again.through as Place) : []]);
    const fromLog = new Map(atPlaces.map((event) => [placeId(event.place), event.raw]));
    // The run is what was released in order: a late event read back inside it goes out once, as
    // late, and one stored in a hole whose record never came is not this run's (it is late too).
    const redelivered: Array<LaneRelease & { place: Place }> = inRange.filter((event) => !lateNow.has(placeId(event.place)) && !passedWhileAbsent(again, event.place)).map((event) => ({ place: event.place, raw: event.raw, late: false }));
    for (const place of again.late) {
      const raw = fromLog.get(placeId(place));
      if (raw !== undefined) redelivered.push({ place, raw, late: true });
    }
    // Late events in their place within the run: after every event released in order below one
    // (it never overtakes them), before every event above it (a consumer that got one of those
    // and resumes after it must have the late one: its late entry may lie below that position).
    const releases: LaneRelease[] = redelivered.sort((a, b) => comparePlaces(a.place, b.place)).map(({ raw, late }) => ({ raw, late }));
    for (const delivery of result.deliver) {
      const raw = inBatch.get(placeId(delivery.place)) ?? fromLog.get(placeId(delivery.place));
      // Absent only if it expired meanwhile: nothing to deliver.
      if (raw !== undefined) releases.push({ raw, late: delivery.late });
    }
    return { key, releases, through: result.next.released, late: [...again.late, ...result.late.map((entry) => entry.place)] };
  }
}

/** What a step redelivers before its own releases: the unconfirmed run, and the late events not known delivered. */
interface Again {
  after: Place | null;
  through: Place | null;
  late: Place[];
  /** The state's holes: a place in one was passed while absent, never released in order. */
  holes: readonly Hole[];
}

function passedWhileAbsent(again: Again, place: Place): boolean {
  return again.holes.some((hole) => (hole.after === null || comparePlaces(hole.after, place) < 0) && comparePlaces(place, hole.before) < 0);
}

function idOf(key: EmitterSession): string {
  return `${key.tenant}\u0000${key.session}\u0000${key.source}`;
}

function placeId(place: Place): string {
  return `${place.epoch}.${place.seq}`;
}
