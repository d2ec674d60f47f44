/**
 * Fan-out's side of session order: runs `advance` for one emitter's session per stream batch
 * and performs its decisions through the one port, in the order the guarantee needs (README,
 * "Session order"): gap checks (strongly consistent log reads), then the late entries, then the
 * state commit, and only then (in `fanout.ts`) the subscription read and the deliveries. So a
 * subscription recorded before that read gets the released events live, and one recorded
 * after it replays them (replay serves up to the committed release point).
 *
 * The state is cached per container; every commit is conditional on the version, and a stale
 * cache is corrected by the refusal's answer, so concurrent or out-of-date containers cost a
 * retry, never a wrong decision.
 */
import { BoundedMap } from '../../protocol/bounded-collections.ts';
import type { Clock } from '../ports/clock.ts';
import type { EmitterSession, SessionOrderPort } from '../ports/session-order.ts';
import { advance, comparePlaces, isReleased } from './emitter-order.ts';
import type { Advance, GapCheck, OrderRecord, OrderState, Place } from './emitter-order.ts';

/** The most positions one gap check reads: a wider gap is an emitter's skip, its contents beyond this are met later. */
const GAP_READ_LIMIT = 100;
const CACHED_SESSIONS = 50_000;
const COMMIT_ATTEMPTS = 3;

export interface OrderLaneDeps {
  order: SessionOrderPort;
  now: Clock;
  /** `AEP_ORDER_WAIT_MS`: how long a gap is waited for. */
  waitMs: number;
  /** After this long a stored event whose stream record never came is released from the log. */
  adoptAfterMs: number;
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

export class OrderLane {
  private readonly cache = new BoundedMap<string, OrderState>(CACHED_SESSIONS);

  constructor(private readonly deps: OrderLaneDeps) {}

  /**
   * One emitter's session through one batch (its records, and/or a wake-up carrying the state it
   * was written with): what to deliver, in order. Throws when it could not check, record or
   * commit; the batch is then retried and nothing was released.
   */
  async step(key: EmitterSession, records: readonly LaneRecord[], wake?: OrderState): Promise<LaneRelease[]> {
    const id = idOf(key);
    let state = this.cache.get(id);
    if (wake !== undefined && (state === undefined || wake.version > state.version)) state = wake;
    state ??= await this.deps.order.load(key);
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.decide(key, state, records, wake === undefined ? undefined : { version: wake.version });
      if (!result.write) return this.texts(key, result, records);
      await this.deps.order.recordLate(key, result.late);
      const outcome = await this.deps.order.commit(key, state.version, result.next, result.wakeAtMs);
      if (outcome.ok) {
        this.cache.set(id, { ...result.next, version: state.version + 1 });
        return this.texts(key, result, records);
      }
      this.cache.delete(id);
      if (attempt >= COMMIT_ATTEMPTS) throw new Error(`order state of ${key.session} kept changing under this batch`);
      state = outcome.current;
    }
  }

  /**
   * Whether the place is at or below the emitter's release point: a redelivery above it is held
   * back (its original's own record delivers the event), or a consumer could come to hold a
   * position above one still to be released. A cached answer only ever says yes.
   */
  async isReleased(key: EmitterSession, place: Place): Promise<boolean> {
    const cached = this.cache.get(idOf(key));
    if (cached !== undefined && isReleased(cached, place)) return true;
    return isReleased(await this.deps.order.load(key), place);
  }

  private async decide(key: EmitterSession, state: OrderState, records: readonly LaneRecord[], wake: { version: number } | undefined): Promise<Extract<Advance, { kind: 'advanced' }>> {
    const checked: GapCheck[] = [];
    for (;;) {
      const result = advance(state, { records, ...(wake === undefined ? {} : { wake }), nowMs: this.deps.now(), waitMs: this.deps.waitMs, adoptAfterMs: this.deps.adoptAfterMs, checked });
      if (result.kind === 'advanced') return result;
      checked.push({ after: result.after, before: result.before, found: await this.deps.order.storedBetween(key, result.after, result.before, GAP_READ_LIMIT) });
    }
  }

  /** The texts of what to deliver: this batch's records, else read from the log (held, adopted, redelivered) in one read of places and at most one range read. */
  private async texts(key: EmitterSession, result: Extract<Advance, { kind: 'advanced' }>, records: readonly LaneRecord[]): Promise<LaneRelease[]> {
    const inBatch = new Map(records.map((record) => [placeId(record.place), record.raw]));
    const again = result.redeliver;
    const missing = result.deliver.filter((delivery) => !inBatch.has(placeId(delivery.place))).map((delivery) => delivery.place);
    const wanted = [...(again?.late ?? []), ...missing];
    const [atPlaces, inRange] = await Promise.all([
      wanted.length === 0 ? [] : this.deps.order.eventsAt(key, wanted),
      again === undefined || again.through === null || (again.after !== null && comparePlaces(again.after, again.through) >= 0) ? [] : this.deps.order.eventsIn(key, again.after, again.through),
    ]);
    const fromLog = new Map(atPlaces.map((event) => [placeId(event.place), event.raw]));
    const releases: LaneRelease[] = [];
    if (again !== undefined) {
      for (const place of [...again.late].sort(comparePlaces)) {
        const raw = fromLog.get(placeId(place));
        if (raw !== undefined) releases.push({ raw, late: true });
      }
      for (const event of inRange) releases.push({ raw: event.raw, late: false });
    }
    for (const delivery of result.deliver) {
      const raw = inBatch.get(placeId(delivery.place)) ?? fromLog.get(placeId(delivery.place));
      // Absent only if it expired meanwhile: nothing to deliver.
      if (raw !== undefined) releases.push({ raw, late: delivery.late });
    }
    return releases;
  }
}

function idOf(key: EmitterSession): string {
  return `${key.tenant}\u0000${key.session}\u0000${key.source}`;
}

function placeId(place: Place): string {
  return `${place.epoch}.${place.seq}`;
}
