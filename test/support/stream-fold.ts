/**
 * Fan-out's per-batch session step (record late arrivals, then move the session's top,
 * `fanout/late-arrivals.ts`) over stream records made from the items a session partition really
 * holds, for store tests on tables no stack reads: the test says the store order (which the
 * stream would give) and when fan-out gets to a batch, with no timing involved.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Deliverable } from '../../src/relay/domain/deliverable.ts';
import { LateArrivals } from '../../src/relay/fanout/late-arrivals.ts';
import type { EventLog } from '../../src/store/event-log.ts';
import { deliverablesOf, sessionActivitiesOf } from '../../src/store/event-stream.ts';
import { eventKeys, POSITIONED_PREFIX } from '../../src/store/keys.ts';
import { SessionSummaryStore } from '../../src/store/session-summaries.ts';
import { queryAll } from '../../src/store/table-access.ts';

type StoredItem = Record<string, AttributeValue>;

// Stream sequence numbers only grow, across every batch of the process.
let nextSequence = BigInt(Date.now()) * 1000n;

/** The event items a session partition holds, in session order (position, seq-less ones at their place). */
export async function sessionItems(client: DynamoDBClient, tableName: string, tenant: string, session: string): Promise<StoredItem[]> {
  const items = (await queryAll(client, tableName, eventKeys.sessionPartition(tenant, session))).filter((item) => item.kind?.S === 'event');
  return items.sort((a, b) => (orderKeyOf(a) < orderKeyOf(b) ? -1 : orderKeyOf(a) > orderKeyOf(b) ? 1 : 0));
}

/** An item's place in its session's order (`event-stream.ts` reads it the same way). */
function orderKeyOf(item: StoredItem): string {
  const sk = item.sk?.S ?? '';
  return sk.startsWith(POSITIONED_PREFIX) ? sk.slice(POSITIONED_PREFIX.length) : (item.pos?.S ?? '');
}

/** The `seq` a stored item holds (undefined for a seq-less one). */
export function seqOf(item: StoredItem): number | undefined {
  return (JSON.parse(item.raw?.S ?? '{}') as { seq?: number }).seq;
}

/** INSERT records of these items, in this (store) order. */
export function insertRecords(items: readonly StoredItem[]): DynamoDBRecord[] {
  return items.map((item) => {
    nextSequence += 1n;
    return { eventName: 'INSERT', dynamodb: { SequenceNumber: nextSequence.toString(), NewImage: item as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'] } };
  });
}

/** Runs fan-out's session step over one stream batch; answers the deliverables it found late. */
export async function foldBatch(client: DynamoDBClient, log: EventLog, tableName: string, records: readonly DynamoDBRecord[]): Promise<Deliverable[]> {
  const lateArrivals = new LateArrivals({ eventLog: log, summaries: new SessionSummaryStore(client, { tableName, now: Date.now }) });
  const deliverables = deliverablesOf(records);
  const activities = sessionActivitiesOf(records);
  const late = new Set<Deliverable>();
  for (const tenant of new Set(deliverables.map((deliverable) => deliverable.tenant))) {
    for (const deliverable of (await lateArrivals.record(tenant, deliverables, activities)).late) late.add(deliverable);
  }
  return deliverables.filter((deliverable) => late.has(deliverable));
}

/** Fan-out finishing with everything a session holds, in session order (nothing late): replay then serves all of it. */
export async function finishFanout(client: DynamoDBClient, log: EventLog, tableName: string, tenant: string, session: string): Promise<void> {
  await foldBatch(client, log, tableName, insertRecords(await sessionItems(client, tableName, tenant, session)));
}
