/**
 * The events table's DynamoDB Stream, read for fan-out: turns the records Lambda hands the
 * fan-out function into plain deliverables. Only inserts of `event` and `redelivery` items
 * carry something to deliver (the deployed event source mapping filters the rest out before
 * invoking; this check keeps the handler correct without the filter too).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { positionOf } from '../protocol/positions.ts';
import type { Deliverable, SessionOrderKey } from '../relay/domain/deliverable.ts';
import type { SessionActivity } from '../relay/domain/history.ts';
import { parseStored } from '../relay/delivery-text.ts';
import { eventKeys, POSITIONED_PREFIX, tenantOfPartition } from './keys.ts';

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
  const storedAtMs = Number(image?.storedAt?.N);
  const order = kind === 'event' ? orderOf(partition, tenant, event.session, image?.sk?.S, image?.pos?.S) : undefined;
  return {
    recordId: sequenceNumber,
    tenant,
    raw,
    event,
    kind,
    storeRank: storeRankOf(sequenceNumber),
    ...(order === undefined ? {} : { order }),
    ...(Number.isFinite(storedAtMs) ? { storedAtMs } : {}),
  };
}

/** A session event's place in its session's order: its position key, or a seq-less event's `pos` (`position-key.ts`). */
function orderOf(partition: string, tenant: string, session: string | undefined, sortKey: string | undefined, pos: string | undefined): SessionOrderKey | undefined {
  if (session === undefined || sortKey === undefined || partition !== eventKeys.sessionPartition(tenant, session)) return undefined;
  if (sortKey.startsWith(POSITIONED_PREFIX)) return { key: sortKey.slice(POSITIONED_PREFIX.length), itemKey: sortKey };
  return pos === undefined ? undefined : { key: pos, itemKey: sortKey };
}

/**
 * What a stream batch stored, per session: the `event` inserts of session partitions (agent-
 * scoped events are never listed, redeliveries store nothing new), folded for
 * `SessionSummariesPort.fold` (one per session, by `fanout/late-arrivals.ts`).
 */
export function sessionActivitiesOf(records: readonly DynamoDBRecord[]): SessionActivity[] {
  const bySession = new Map<string, SessionActivity>();
  for (const record of records) {
    if (record.eventName !== 'INSERT') continue;
    const image = record.dynamodb?.NewImage;
    const partition = image?.pk?.S;
    const raw = image?.raw?.S;
    const storedAt = Number(image?.storedAt?.N);
    const expiresAt = Number(image?.expiresAt?.N);
    const sequenceNumber = record.dynamodb?.SequenceNumber;
    if (image?.kind?.S !== 'event' || partition === undefined || raw === undefined || sequenceNumber === undefined) continue;
    if (!Number.isFinite(storedAt) || !Number.isFinite(expiresAt)) continue;
    const tenant = tenantOfPartition(partition);
    const event = parseStored(raw);
    if (tenant === undefined || event === undefined || typeof event.session !== 'string') continue;
    // Only session partitions: `T#{tenant}#S#{session}` (`keys.ts`).
    if (partition !== eventKeys.sessionPartition(tenant, event.session)) continue;
    const key = `${tenant}\u0000${event.session}`;
    const position = positionOf(event);
    const order = orderOf(partition, tenant, event.session, image?.sk?.S, image?.pos?.S);
    const watermark = storeRankOf(sequenceNumber);
    const known = bySession.get(key);
    if (known === undefined) {
      bySession.set(key, {
        tenant,
        session: event.session,
        agent: event.agent,
        firstEventMs: storedAt,
        lastEventMs: storedAt,
        ...(position === undefined ? {} : { lastPosition: { epoch: position.epoch, seq: position.seq } }),
        eventCount: 1,
        ended: event.type === 'session.ended',
        visibleUntilSec: expiresAt,
        watermark,
        ...(order === undefined ? {} : { topOrderKey: order.key }),
      });
      continue;
    }
    if (order !== undefined && (known.topOrderKey === undefined || order.key > known.topOrderKey)) known.topOrderKey = order.key;
    known.firstEventMs = Math.min(known.firstEventMs, storedAt);
    known.lastEventMs = Math.max(known.lastEventMs, storedAt);
    if (position !== undefined) known.lastPosition = { epoch: position.epoch, seq: position.seq };
    known.eventCount += 1;
    known.ended ||= event.type === 'session.ended';
    known.visibleUntilSec = Math.max(known.visibleUntilSec, expiresAt);
    if (watermark > known.watermark) known.watermark = watermark;
  }
  return [...bySession.values()];
}

/** Stream sequence numbers are decimal strings of up to 40 digits. */
const SEQUENCE_DIGITS = 40;

/** A record's place in store order as a string whose order is numeric order (zero-padded sequence number). */
function storeRankOf(sequenceNumber: string): string {
  return sequenceNumber.padStart(SEQUENCE_DIGITS, '0');
}
