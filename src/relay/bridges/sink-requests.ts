/**
 * What each sink is sent for a batch of one tenant's events, as data (the transport sends it):
 * the sink's filter and capture ceiling applied, the AEP-0005 mapping of its kind, and the
 * events split into requests within the receiver's limits.
 *
 * Ceilings: the CloudEvents forms (webhook, EventBridge) are re-emitting hops, so the AEP-0001
 * §8.2 down-level applies to them like to any fan-out hop (AEP-0005 §6); the OTLP and OCSF
 * exporters apply their own §3.3/§4.6 rule (`export-ceiling.ts`).
 */
import { compileFilter } from '../../protocol/attr-match.ts';
import { CLOUDEVENTS_BATCH_JSON, toCloudEvent } from '../../protocol/bridges/cloudevents.ts';
import { toOcsfRecord } from '../../protocol/bridges/ocsf.ts';
import { otlpLogsRequest } from '../../protocol/bridges/otlp-json.ts';
import { toOtlpLogRecord } from '../../protocol/bridges/otlp-logs.ts';
import { downlevel } from '../../protocol/downlevel.ts';
import type { AepEvent } from '../../protocol/event.ts';
import type { SinkSettings } from './sink-settings.ts';

/** One stored event on its way out: its text is what a dead letter keeps. */
export interface OutboundEvent {
  raw: string;
  event: AepEvent;
}

export interface EventBridgeEntry {
  source: string;
  detailType: string;
  /** The CloudEvents form of the event (JSON text). */
  detail: string;
  time: string;
}

/** One request to a sink, and the events it carries. */
export type SinkRequest =
  | { transport: 'http'; url: string; contentType: string; body: string; events: OutboundEvent[] }
  | { transport: 'eventbridge'; busArn: string; entries: EventBridgeEntry[]; events: OutboundEvent[] };

/** An event a sink can never take (too large for the receiver): dead-lettered at once, not retried. */
export interface Unsendable {
  event: OutboundEvent;
  reason: string;
}

export interface SinkPlan {
  requests: SinkRequest[];
  unsendable: Unsendable[];
}

/** Events per HTTP request, and the byte budget of one body. */
export const MAX_EVENTS_PER_REQUEST = 100;
export const MAX_HTTP_BODY_BYTES = 1_000_000;
/** PutEvents takes at most 10 entries, 256 KB in total, per call (EventBridge quotas). */
export const EVENTBRIDGE_MAX_ENTRIES = 10;
export const EVENTBRIDGE_MAX_BYTES = 256 * 1024;
/** EventBridge `Source` of every entry: the AEP type root (AEP-0005 B3) without its final dot. */
export const EVENTBRIDGE_SOURCE = 'dev.aep';

/** The requests that deliver `events` (one tenant's, in stream order) to `sink`. */
export function planSinkRequests(sink: SinkSettings, events: readonly OutboundEvent[]): SinkPlan {
  const matches = sink.types === undefined ? () => true : compileFilter({ type: sink.types });
  // A sink set by a token bound to agents receives only those agents' events (`bridge-admin.ts`).
  const agents = sink.agents === undefined ? undefined : new Set(sink.agents);
  const ofAgents = (event: OutboundEvent['event']) => agents === undefined || (typeof event.agent === 'string' && agents.has(event.agent));
  const selected = events.filter((outbound) => matches(outbound.event) && ofAgents(outbound.event));
  switch (sink.kind) {
    case 'cloudevents-webhook':
      return planHttp(sink.target, CLOUDEVENTS_BATCH_JSON, selected, (event) => JSON.stringify(toCloudEvent(downlevel(event, sink.maxCapture))), (items) => `[${items.join(',')}]`);
    case 'ocsf-webhook':
      return planHttp(sink.target, 'application/x-ndjson', selected, (event) => {
        const record = toOcsfRecord(event, sink.maxCapture);
        return record === undefined ? undefined : JSON.stringify(record);
      }, (items) => `${items.join('\n')}\n`);
    case 'otlp':
      return planOtlp(sink, selected);
    case 'eventbridge':
      return planEventBridge(sink, selected);
  }
}

type Encode = (event: AepEvent) => string | undefined;

/** One mapped event ready to batch: what goes in the request, its size, the event it carries. */
interface Sized<Item> {
  item: Item;
  bytes: number;
  event: OutboundEvent;
}

/** Splits mapped events, in order, into runs of at most `maxItems` items and `maxBytes` bytes. */
function batchesOf<Item>(sized: readonly Sized<Item>[], maxItems: number, maxBytes: number): Array<Sized<Item>[]> {
  const batches: Array<Sized<Item>[]> = [];
  let current: Sized<Item>[] = [];
  let bytes = 0;
  for (const entry of sized) {
    if (current.length === maxItems || (current.length > 0 && bytes + entry.bytes > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function planHttp(url: string, contentType: string, events: readonly OutboundEvent[], encode: Encode, join: (items: string[]) => string): SinkPlan {
  const plan: SinkPlan = { requests: [], unsendable: [] };
  const sized: Sized<string>[] = [];
  for (const outbound of events) {
    const item = encode(outbound.event);
    if (item === undefined) continue;
    const bytes = Buffer.byteLength(item, 'utf8') + 1;
    if (bytes > MAX_HTTP_BODY_BYTES) plan.unsendable.push({ event: outbound, reason: `the mapped event is ${bytes} bytes; one request carries at most ${MAX_HTTP_BODY_BYTES}` });
    else sized.push({ item, bytes, event: outbound });
  }
  for (const batch of batchesOf(sized, MAX_EVENTS_PER_REQUEST, MAX_HTTP_BODY_BYTES)) {
    plan.requests.push({ transport: 'http', url, contentType, body: join(batch.map((entry) => entry.item)), events: batch.map((entry) => entry.event) });
  }
  return plan;
}

function planOtlp(sink: SinkSettings, events: readonly OutboundEvent[]): SinkPlan {
  const plan: SinkPlan = { requests: [], unsendable: [] };
  for (let start = 0; start < events.length; start += MAX_EVENTS_PER_REQUEST) {
    const chunk = events.slice(start, start + MAX_EVENTS_PER_REQUEST);
    const body = JSON.stringify(otlpLogsRequest(chunk.map((outbound) => toOtlpLogRecord(outbound.event, sink.maxCapture))));
    plan.requests.push({ transport: 'http', url: sink.target, contentType: 'application/json', body, events: chunk });
  }
  return plan;
}

function planEventBridge(sink: SinkSettings, events: readonly OutboundEvent[]): SinkPlan {
  const plan: SinkPlan = { requests: [], unsendable: [] };
  const sized: Sized<EventBridgeEntry>[] = [];
  for (const outbound of events) {
    const cloudEvent = toCloudEvent(downlevel(outbound.event, sink.maxCapture));
    const entry: EventBridgeEntry = { source: EVENTBRIDGE_SOURCE, detailType: String(cloudEvent.type), detail: JSON.stringify(cloudEvent), time: outbound.event.time };
    const bytes = entrySize(entry);
    if (bytes > EVENTBRIDGE_MAX_BYTES) plan.unsendable.push({ event: outbound, reason: `the PutEvents entry is ${bytes} bytes; EventBridge takes at most ${EVENTBRIDGE_MAX_BYTES}` });
    else sized.push({ item: entry, bytes, event: outbound });
  }
  for (const batch of batchesOf(sized, EVENTBRIDGE_MAX_ENTRIES, EVENTBRIDGE_MAX_BYTES)) {
    plan.requests.push({ transport: 'eventbridge', busArn: sink.target, entries: batch.map((entry) => entry.item), events: batch.map((entry) => entry.event) });
  }
  return plan;
}

/** EventBridge's entry size: 14 bytes for Time plus the UTF-8 bytes of Source, DetailType and Detail. */
function entrySize(entry: EventBridgeEntry): number {
  return 14 + Buffer.byteLength(entry.source, 'utf8') + Buffer.byteLength(entry.detailType, 'utf8') + Buffer.byteLength(entry.detail, 'utf8');
}
