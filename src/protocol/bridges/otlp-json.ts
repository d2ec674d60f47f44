/**
 * The OTLP/HTTP JSON encoding of LogRecords: the `ExportLogsServiceRequest` body a collector
 * takes on `POST /v1/logs` with `Content-Type: application/json`. Per the OTLP JSON rules, field
 * names are lowerCamelCase, 64-bit integers are decimal strings, enums are numbers, trace and
 * span ids are hex strings, and attribute values are `AnyValue`s.
 */
import type { JsonValue } from '../event.ts';
import type { OtlpLogRecord } from './otlp-logs.ts';

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: KeyValue[] } }
  | Record<string, never>;

interface KeyValue {
  key: string;
  value: AnyValue;
}

/** The instrumentation scope the relay's records are reported under. */
export const OTLP_SCOPE_NAME = 'aep-relay.bridge';

/** One request for a batch of records, grouped by resource (the emitting agent, AEP-0005 §3.2). */
export function otlpLogsRequest(records: readonly OtlpLogRecord[]): { resourceLogs: unknown[] } {
  const byService = new Map<string, OtlpLogRecord[]>();
  for (const record of records) {
    const service = record.resource['service.name'];
    const group = byService.get(service);
    if (group === undefined) byService.set(service, [record]);
    else group.push(record);
  }
  return {
    resourceLogs: [...byService].map(([service, group]) => ({
      resource: { attributes: [keyValue('service.name', service)] },
      scopeLogs: [{ scope: { name: OTLP_SCOPE_NAME }, logRecords: group.map(encodeRecord) }],
    })),
  };
}

function encodeRecord(record: OtlpLogRecord): Record<string, unknown> {
  return {
    timeUnixNano: record.time_unix_nano.toString(),
    severityNumber: record.severity_number,
    severityText: record.severity_text,
    eventName: record.event_name,
    attributes: Object.entries(record.attributes).map(([key, value]) => keyValue(key, value)),
    ...(record.body === undefined ? {} : { body: anyValue(record.body) }),
    ...(record.trace_id === undefined ? {} : { traceId: record.trace_id, spanId: record.span_id, flags: record.flags }),
  };
}

function keyValue(key: string, value: JsonValue): KeyValue {
  return { key, value: anyValue(value) };
}

function anyValue(value: JsonValue): AnyValue {
  if (value === null) return {};
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  return { kvlistValue: { values: Object.entries(value).map(([key, member]) => keyValue(key, member)) } };
}
