/**
 * Reads the event log's stream records: which tenant, which stored text. Only inserts of
 * `event` and `redelivery` items carry something to deliver (the deployed event source
 * mapping filters the rest out before invoking; this check keeps the handler correct
 * without the filter too).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { AepEvent } from '../../protocol/event.ts';
import { parseStored } from '../delivery-text.ts';

export interface Deliverable {
  /** The stream sequence number, reported back on failure (`batchItemFailures`). */
  sequenceNumber: string;
  tenant: string;
  raw: string;
  event: AepEvent;
  /** `redelivery`: a duplicate forwarded live as received (AEP-0003 §5), never skipped. */
  kind: 'event' | 'redelivery';
}

export function deliverableOf(record: DynamoDBRecord): Deliverable | undefined {
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
  return { sequenceNumber, tenant, raw, event, kind };
}

/** Every partition key starts `T#{tenant}#` (see `store/keys.ts`). */
function tenantOfPartition(partition: string): string | undefined {
  if (!partition.startsWith('T#')) return undefined;
  const end = partition.indexOf('#', 2);
  return end === -1 ? undefined : partition.slice(2, end);
}
