/**
 * How big a lane's work is on the wire (the Invoke payload fan-out sends a lane worker), per
 * planned action: the relay's own encoding (`encodeLaneWork`) of the bench's events, one session
 * subscription per connection, every event posted to every connection (the lanes stage's shape).
 * Lambda refuses a synchronous invocation whose payload is over 6 MB.
 */
import type { Deliverable } from '../src/relay/domain/deliverable.ts';
import type { ConnectionPlan } from '../src/relay/fanout/delivery-plan.ts';
import { encodeLaneWork } from '../src/relay/fanout/lane-work.ts';
import { benchEvent } from './workload.ts';

/** Lambda's payload limit for a synchronous (RequestResponse) invocation, bytes. */
export const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;
export const LAMBDA_INVOKE_URL = 'https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html';

/** Bytes of one lane's encoded work: `records` events, each to every one of `connections` connections. */
export function laneWorkBytes(records: number, connections: number): number {
  const session = 'session-0123456789';
  const deliverables: Deliverable[] = Array.from({ length: records }, (_, index) => {
    const event = benchEvent(session, index);
    return { recordId: `record-${index}`, tenant: 'bench-tenant', raw: JSON.stringify(event), event: event as unknown as Deliverable['event'], kind: 'event' };
  });
  const plans = new Map<string, ConnectionPlan>();
  for (let index = 0; index < connections; index += 1) {
    const connectionId = `L${index.toString(36).padStart(10, '0')}=`;
    const entry = { connectionId, subscriptionId: 's1', filter: JSON.stringify({ session }), state: 'live' as const, pending: [], indexKey: { pk: `T#bench-tenant#SUBS#S#${session}`, sk: `${connectionId}#s1` } };
    plans.set(connectionId, { tenant: 'bench-tenant', connectionId, entries: [entry], actions: deliverables.map((deliverable) => ({ kind: 'post' as const, deliverable, ceiling: undefined, subscriptionIds: ['s1'] })) });
  }
  return Buffer.byteLength(JSON.stringify(encodeLaneWork(plans)));
}
