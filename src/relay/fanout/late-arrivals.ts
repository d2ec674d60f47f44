/**
 * Per stream batch and session, before fan-out reads any subscription: records the events
 * stored after a higher one of their session (late arrivals) in the log's late ledger, then
 * moves the session's top (its summary's `topKey`) past the batch. That order is what makes
 * resume lossless (AEP-0003 §7):
 *
 * - Replay serves nothing above the top it reads first (`EventLogPort.replay`): whatever lies
 *   above is handled by fan-out after that read, so after the subscription was recorded, and is
 *   delivered live. Everything at or below the top has its late arrivals on record, and so has
 *   everything stored before it (one session is one stream shard lineage, processed in order).
 * - A consumer holding position P therefore has every event of the session stored before P
 *   that fan-out had finished with when P reached it. What it may lack below P was stored after
 *   P: a late arrival, whose ledger entry (its `above` at or above P) resume after P returns. An
 *   event fan-out had not finished with when P reached the consumer was stored after the top,
 *   and the top is at or above P, so the same entry covers it once fan-out gets there; until
 *   then the consumer is subscribed and gets it live. (Redeliveries above the top are held back
 *   for this, `redelivery-gate.ts`.)
 *
 * "Late" is exact, measured against the session's top before the batch (stream order is store
 * order). The common batch, whose events rise above the top, costs one conditional write (the
 * summary fold, which also moves the top). A batch rising from below the top has that fold
 * refused (the refusal answers the top); a batch falling within itself reads the top instead;
 * either then writes the ledger and folds with the new top: one refused write (or one read)
 * more. A batch folded before (a retry) writes nothing: its ledger was written before its fold.
 */
import type { Deliverable, LateArrival } from '../domain/deliverable.ts';
import type { SessionActivity, SessionTop } from '../domain/history.ts';
import type { EventLogPort } from '../ports/event-log.ts';
import type { SessionSummariesPort } from '../ports/session-summaries.ts';

export interface LateArrivalsDeps {
  eventLog: Pick<EventLogPort, 'recordLateArrivals'>;
  summaries: Pick<SessionSummariesPort, 'fold' | 'readTop'>;
}

/** What folding one tenant's batch found. */
export interface FoldedBatch {
  /** Deliverables fan-out must not skip as already replayed. */
  late: ReadonlySet<Deliverable>;
  /** Sessions fan-out had handled nothing of before this batch. */
  freshSessions: ReadonlySet<string>;
}

export class LateArrivals {
  constructor(private readonly deps: LateArrivalsDeps) {}

  /**
   * Folds one tenant's batch into its sessions, recording late arrivals first; throws when it
   * could not. Answers the deliverables fan-out must not skip as already replayed (the late ones;
   * every one of a session whose batch was folded before, when lateness is no longer known), and
   * the sessions fan-out had handled nothing of before this batch (`SessionSequencer` then knows
   * every lower position is still to come).
   */
  async record(tenant: string, deliverables: readonly Deliverable[], activities: readonly SessionActivity[]): Promise<FoldedBatch> {
    const bySession = new Map<string, Deliverable[]>();
    for (const deliverable of deliverables) {
      const session = deliverable.event.session;
      if (deliverable.kind !== 'event' || deliverable.order === undefined || deliverable.storeRank === undefined || session === undefined) continue;
      const list = bySession.get(session);
      if (list === undefined) bySession.set(session, [deliverable]);
      else list.push(deliverable);
    }
    const late = new Set<Deliverable>();
    const freshSessions = new Set<string>();
    await Promise.all(
      activities
        .filter((activity) => activity.tenant === tenant)
        .map(async (activity) => {
          const folded = await this.foldSession(activity, bySession.get(activity.session) ?? []);
          for (const deliverable of folded.late) late.add(deliverable);
          if (folded.fresh) freshSessions.add(activity.session);
        }),
    );
    return { late, freshSessions };
  }

  /** `stored`: the session's ordered events of the batch, in stream order. */
  private async foldSession(activity: SessionActivity, stored: readonly Deliverable[]): Promise<{ late: readonly Deliverable[]; fresh: boolean }> {
    const keys = stored.map((deliverable) => deliverable.order?.key as string);
    const lowest = keys[0];
    if (lowest === undefined || activity.topOrderKey === undefined) {
      // Nothing in the session's order (no positioned event): only the summary to fold.
      await this.deps.summaries.fold(activity);
      return { late: [], fresh: false };
    }
    let current: SessionTop;
    if (isRising(keys)) {
      const attempt = await this.deps.summaries.fold(activity, { top: activity.topOrderKey, onlyAbove: lowest });
      if (attempt.kind === 'folded') return { late: [], fresh: attempt.topBefore === null };
      current = attempt.current;
    } else {
      // Some event is below an earlier one of the batch: late whatever the top, so read it.
      current = await this.deps.summaries.readTop(activity.tenant, activity.session);
    }
    if (current.watermark !== undefined && current.watermark >= activity.watermark) return { late: lateOnRetry(stored, activity, current), fresh: false };
    const { late, arrivals, top } = lateAmong(stored, current.top);
    if (arrivals.length > 0) await this.deps.eventLog.recordLateArrivals(activity.tenant, activity.session, arrivals);
    await this.deps.summaries.fold(activity, top === undefined ? {} : { top });
    return { late, fresh: current.top === null };
  }
}

/**
 * The late ones of a batch folded before (a retry; its ledger was written then): measured again
 * from the top before it when it is the newest batch folded, else every event (fan-out then
 * skips none as already replayed: duplicates, never a miss).
 */
function lateOnRetry(stored: readonly Deliverable[], activity: SessionActivity, current: SessionTop): readonly Deliverable[] {
  return current.watermark === activity.watermark && current.topBefore !== undefined ? lateAmong(stored, current.topBefore).late : stored;
}

function isRising(keys: readonly string[]): boolean {
  return keys.every((key, index) => index === 0 || key > (keys[index - 1] as string));
}

/** The late arrivals among a session's events in store order, measured from `previousTop`, and the top after them. */
export function lateAmong(stored: readonly Deliverable[], previousTop: string | null): { late: Deliverable[]; arrivals: LateArrival[]; top: string | undefined } {
  let top = previousTop ?? undefined;
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
  return { late, arrivals, top };
}
