/**
 * The events table's DynamoDB Stream, read for fan-out: turns the records Lambda hands the
 * fan-out function into plain deliverables and wake-ups. Only inserts of `event` and
 * `redelivery` items carry something to deliver, and order items only while they hold events
 * (`wakeAt`, `session-order-store.ts`); the deployed event source mapping filters the rest out
 * before invoking, and these checks keep the handler correct without the filter too.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { positionOf } from '../protocol/positions.ts';
import type { Deliverable } from '../relay/domain/deliverable.ts';
import type { SessionActivity } from '../relay/domain/history.ts';
import { parseStored } from '../relay/domain/delivery-text.ts';
import type { WakeUp } from '../relay/fanout/fanout.ts';
import { eventKeys, ORDER_PREFIX, tenantOfPartition } from './keys.ts';
import { orderStateOfImage } from './session-order-store.ts';

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
  const via = image?.via?.S;
  return { recordId: sequenceNumber, tenant, raw, event, kind, ...(Number.isFinite(storedAtMs) ? { storedAtMs } : {}), ...(via === undefined ? {} : { via }) };
}

/** The wake-ups of a batch: order items written while they hold events, with the state they carry. */
export function wakeUpsOf(records: readonly DynamoDBRecord[]): WakeUp[] {
  const wakes: WakeUp[] = [];
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    const partition = image?.pk?.S;
    const sequenceNumber = record.dynamodb?.SequenceNumber;
    if (record.eventName === 'REMOVE' || image?.kind?.S !== 'order' || image.wakeAt?.N === undefined || partition === undefined || sequenceNumber === undefined) continue;
    if (!(image.sk?.S ?? '').startsWith(ORDER_PREFIX)) continue;
    const tenant = tenantOfPartition(partition);
    const session = image.session?.S;
    const order = orderStateOfImage(image);
    if (tenant === undefined || session === undefined || order === undefined || partition !== eventKeys.sessionPartition(tenant, session)) continue;
    wakes.push({ recordId: sequenceNumber, key: { tenant, session, source: order.source }, state: order.state });
  }
  return wakes;
}

/**
 * What a stream batch stored, per session: the `event` inserts of session partitions (agent-
 * scoped events are never listed, redeliveries store nothing new), folded for
 * `SessionSummariesPort.fold` (one per session, by `fanout/fanout.ts`).
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
      });
      continue;
    }
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
