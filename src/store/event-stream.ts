/**
 * The events table's DynamoDB Stream, read for fan-out: turns the records Lambda hands the
 * fan-out function into plain deliverables. Only inserts of `event` and `redelivery` items
 * carry something to deliver (the deployed event source mapping filters the rest out before
 * invoking; this check keeps the handler correct without the filter too).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { Deliverable } from '../relay/domain/deliverable.ts';
import { parseStored } from '../relay/delivery-text.ts';
import { tenantOfPartition } from './keys.ts';

/** The deliverables of a batch, in stream order; a record's id is its stream sequence number. */
export function deliverablesOf(records: readonly DynamoDBRecord[]): Deliverable[] {
  return records.map(deliverableOf).filter((deliverable): deliverable is Deliverable => deliverable !== undefined);
}

function deliverableOf(record: DynamoDBRecord): Deliverable | undefined {
  if (record.eventName !== 'INSERT') return undefined;
  const image = record.dynamodb?.NewImage;
  const kind = image?.kind?.S;
  if (kind !== 'event' && kind !== 'redelivery') return undefined;
  const raw = image?.raw?.S;
  const partition = image?.pk?.S;
  const sequenceNumber = record.dynamodb?.SequenceNumber;
  if (raw === undefined || partition === undefined || sequenceNumber === undefined) return undefined;
  const tenant = tenantOfPartition(partition);
  const event = parseStored(raw);
  if (tenant === undefined || event === undefined) return undefined;
  return { recordId: sequenceNumber, tenant, raw, event, kind };
}
