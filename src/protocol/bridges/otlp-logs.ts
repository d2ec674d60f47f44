/**
 * The OTLP export (AEP-0005 §3): an AEP event as an OpenTelemetry LogRecord in the OTel Events
 * model (a LogRecord with `event_name`), in the data model's own field names. `otlp-json.ts`
 * turns records into the OTLP/HTTP JSON request a collector receives.
 */
import type { AepEvent, JsonObject, JsonValue } from '../event.ts';
import { DEFAULT_CAPTURE, DEFAULT_SEVERITY, isSeverity } from '../levels.ts';
import type { CaptureLevel, Severity } from '../levels.ts';
import { AEP_TYPE_ROOT } from './cloudevents.ts';
import { epochNanos } from './event-time.ts';
import { DEFAULT_EXPORT_CEILING, exportablePayload } from './export-ceiling.ts';

/** AEP-0005 §3.4: each AEP level at the bottom of its OTel severity range. */
export const OTLP_SEVERITY: Readonly<Record<Severity, { text: string; number: number }>> = {
  debug: { text: 'DEBUG', number: 5 },
  info: { text: 'INFO', number: 9 },
  notice: { text: 'INFO2', number: 10 },
  warning: { text: 'WARN', number: 13 },
  error: { text: 'ERROR', number: 17 },
  critical: { text: 'FATAL', number: 21 },
};

/** AEP-0005 §3.4 inverse: an OTel severity number (1-24) bucketed back to an AEP level. */
export function severityOfOtlpNumber(severityNumber: number): Severity | undefined {
  if (!Number.isInteger(severityNumber) || severityNumber < 1 || severityNumber > 24) return undefined;
  if (severityNumber <= 8) return 'debug';
  if (severityNumber === 9) return 'info';
  if (severityNumber <= 12) return 'notice';
  if (severityNumber <= 16) return 'warning';
  if (severityNumber <= 20) return 'error';
  return 'critical';
}

/** A LogRecord in the OTel logs data model, with its resource (AEP-0005 §3.2). */
export interface OtlpLogRecord {
  time_unix_nano: bigint;
  event_name: string;
  severity_text: string;
  severity_number: number;
  resource: { 'service.name': string };
  attributes: Record<string, JsonValue>;
  trace_id?: string;
  span_id?: string;
  flags?: number;
  body?: JsonObject;
}

/** Envelope attribute -> LogRecord attribute, when present (AEP-0005 §3.2 table). */
const ATTRIBUTE_NAMES: ReadonlyArray<readonly [keyof AepEvent & string, string]> = [
  ['session', 'aep.session_id'],
  ['run', 'aep.run_id'],
  ['step', 'aep.step'],
  ['seq', 'aep.sequence'],
  ['epoch', 'aep.epoch'],
  ['cause', 'aep.causation_id'],
  ['subject', 'aep.subject'],
];

const GEN_AI_PREFIX = 'gen_ai.';

/**
 * AEP-0005 §3.2/§3.3: the LogRecord of `event` under the exporter ceiling `maxCapture`.
 * `gen_ai.*` payload members become top-level attributes verbatim, the rest of the surviving
 * payload is the body; an event above the ceiling exports envelope-derived attributes only.
 */
export function toOtlpLogRecord(event: AepEvent, maxCapture: CaptureLevel = DEFAULT_EXPORT_CEILING): OtlpLogRecord {
  const severity = isSeverity(event.severity) ? event.severity : DEFAULT_SEVERITY;
  const attributes: Record<string, JsonValue> = {
    'aep.agent_id': event.agent,
    'aep.event_id': event.id,
    'aep.capture': event.capture ?? DEFAULT_CAPTURE,
    'aep.source': event.source,
  };
  for (const [name, attribute] of ATTRIBUTE_NAMES) {
    const value = event[name];
    if (value !== undefined) attributes[attribute] = value;
  }
  const record: OtlpLogRecord = {
    // A validated event always has a readable time; 0 stands for "unknown" in OTLP.
    time_unix_nano: epochNanos(event.time) ?? 0n,
    event_name: AEP_TYPE_ROOT + event.type,
    severity_text: OTLP_SEVERITY[severity].text,
    severity_number: OTLP_SEVERITY[severity].number,
    resource: { 'service.name': event.agent },
    attributes,
  };
  const trace = parseTraceparent(event.traceparent);
  if (trace !== undefined) Object.assign(record, trace);

  const payload = exportablePayload(event, maxCapture);
  const body: JsonObject = {};
  for (const [name, value] of Object.entries(payload ?? {})) {
    if (name.startsWith(GEN_AI_PREFIX)) attributes[name] = value;
    else body[name] = value;
  }
  if (Object.keys(body).length > 0) record.body = body;
  return record;
}

/** W3C Trace Context `version-traceid-parentid-flags` as OTLP's trace fields, so records land on the trace. */
function parseTraceparent(traceparent: string | undefined): { trace_id: string; span_id: string; flags: number } | undefined {
  if (traceparent === undefined) return undefined;
  const [, traceId, spanId, flags] = traceparent.split('-');
  if (traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  return { trace_id: traceId, span_id: spanId, flags: Number.parseInt(flags, 16) };
}
