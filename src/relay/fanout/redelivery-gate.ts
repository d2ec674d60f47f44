/**
 * Which redeliveries fan-out forwards now. A redelivery (a retransmit the log refused as a
 * duplicate) reaches fan-out through a marker in another partition, so possibly before its
 * session's own records. Forwarded while its position is above the session's top (what fan-out
 * has finished with, `late-arrivals.ts`), it could hand a consumer that position before events
 * stored below it have been recorded or delivered: resuming after it, the consumer would never get
 * them. Such a redelivery is held back: its original's own record is still to come and delivers
 * the event. A redelivery at or below the top, or of an event without a position (commands),
 * goes out as received (AEP-0003 §5).
 */
import { positionOf } from '../../protocol/positions.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { EventLogPort } from '../ports/event-log.ts';

/** The deliverables to plan: all but the redeliveries of positions fan-out has not finished with. */
export async function forwardable(eventLog: Pick<EventLogPort, 'finishedWith'>, tenant: string, deliverables: readonly Deliverable[]): Promise<Deliverable[]> {
  const positioned = deliverables.map((deliverable) => ({ deliverable, position: deliverable.kind === 'redelivery' ? positionOf(deliverable.event) : undefined }));
  const sessions = new Set(positioned.flatMap(({ position }) => (position === undefined ? [] : [position.session])));
  if (sessions.size === 0) return [...deliverables];
  const finished = new Map(await Promise.all([...sessions].map(async (session) => [session, await eventLog.finishedWith(tenant, session)] as const)));
  return positioned.filter(({ position }) => position === undefined || finished.get(position.session)?.(position) === true).map(({ deliverable }) => deliverable);
}
