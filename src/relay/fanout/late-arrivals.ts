/**
 * Finds, in each stream batch, the session events stored after a higher one of their session,
 * and records them in the log's late ledger before fan-out reads any subscription
 * (`EventLogPort.recordLateArrivals`). That is what makes resume lossless (AEP-0003 §7):
 *
 * A consumer holding position P has every event of the session stored before P (live delivery
 * follows store order, a replay reads everything stored up to its read). What it may lack below
 * P is exactly what was stored after P, i.e. after a position at or above P: a late arrival.
 * Resume after P returns the ledger's entries below P stored after P: when P is itself in the
 * ledger, those with a later store rank; otherwise those whose `above` is at or above P (an
 * event not stored late was the session's top when stored, so whatever was stored with a top at
 * or above it came after it). Because
 * the entry is written before fan-out delivers the event, a consumer either resumes after the
 * write (its replay finds the entry) or is already subscribed when the event goes out live.
 *
 * The stream of one session is its store order (one partition key: one shard lineage, records
 * in commit order), so "late" is exact, not a guess from clocks. It is measured against the
 * session's top before the batch, which the session summary's update of this same batch
 * answers (`SessionSummariesPort.recordActivity`), so it holds across containers. When that is
 * unknown (a retried batch, a failed summary write) the log's current ceiling stands in: it is
 * at or above the true top, so in-order events may be recorded as late (one ledger item, and at
 * worst a duplicate on resume), never a late one missed.
 */
import { sessionTopKey } from '../domain/history.ts';
import type { SessionTops } from '../domain/history.ts';
import type { Deliverable, LateArrival } from '../domain/deliverable.ts';
import type { EventLogPort } from '../ports/event-log.ts';

export class LateArrivals {
  constructor(private readonly eventLog: Pick<EventLogPort, 'recordLateArrivals' | 'orderCeiling'>) {}

  /** Records the late arrivals among one tenant's deliverables (in stream order) and answers them; throws when it could not. */
  async record(tenant: string, deliverables: readonly Deliverable[], previousTops: SessionTops): Promise<ReadonlySet<Deliverable>> {
    const bySession = new Map<string, Deliverable[]>();
    for (const deliverable of deliverables) {
      const session = deliverable.event.session;
      if (deliverable.kind !== 'event' || deliverable.order === undefined || session === undefined) continue;
      const list = bySession.get(session);
      if (list === undefined) bySession.set(session, [deliverable]);
      else list.push(deliverable);
    }
    const late = new Set<Deliverable>();
    await Promise.all([...bySession].map(async ([session, stored]) => {
      for (const deliverable of await this.recordSession(tenant, session, stored, previousTops.get(sessionTopKey(tenant, session)))) late.add(deliverable);
    }));
    return late;
  }

  private async recordSession(tenant: string, session: string, stored: readonly Deliverable[], previousTop: string | null | undefined): Promise<Deliverable[]> {
    let top = previousTop === undefined ? await this.eventLog.orderCeiling(tenant, session) : (previousTop ?? undefined);
    const late: Deliverable[] = [];
    const arrivals: LateArrival[] = [];
    for (const deliverable of stored) {
      const { order, storeRank } = deliverable;
      if (order === undefined || storeRank === undefined) continue;
      if (top !== undefined && order.key < top) {
        late.push(deliverable);
        arrivals.push({ orderKey: order.key, itemKey: order.itemKey, above: top, storeRank });
      } else top = order.key;
    }
    if (arrivals.length > 0) await this.eventLog.recordLateArrivals(tenant, session, arrivals);
    return late;
  }
}
