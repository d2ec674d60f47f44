/**
 * The OCSF projection (AEP-0005 §4): AEP's security-relevant families as OCSF 1.8.0 records.
 * Only the ten types of the §4.2 table project; every other event produces no record by
 * design (§4.1). Each record is built from the envelope and the payload that survives the
 * exporter ceiling, and nothing else (§4.3), and claims a disposition only where the event
 * itself asserts the outcome (§4.5).
 */
import type { AepEvent, JsonObject, JsonValue } from '../event.ts';
import { isJsonObject } from '../event.ts';
import { DEFAULT_SEVERITY, isSeverity } from '../levels.ts';
import type { CaptureLevel, Severity } from '../levels.ts';
import { epochMillis } from './event-time.ts';
import { DEFAULT_EXPORT_CEILING, exportablePayload } from './export-ceiling.ts';

/** The pinned OCSF version (AEP-0005 §4.1, re-checked per AEP release). */
export const OCSF_VERSION = '1.8.0';

const AUTHENTICATION = 3002;
const PROCESS_ACTIVITY = 1007;
const DETECTION_FINDING = 2004;

/** Each class's OCSF category: 3 Identity & Access Management, 1 System Activity, 2 Findings. */
const CATEGORY_OF: Readonly<Record<number, number>> = { [AUTHENTICATION]: 3, [PROCESS_ACTIVITY]: 1, [DETECTION_FINDING]: 2 };

interface ClassMapping {
  classUid: number;
  activityId: number;
  statusId?: number;
  dispositionId?: number;
}

/** AEP-0005 §4.2: class, activity, status and fixed disposition per projected type. */
const CLASS_MAPPING: ReadonlyMap<string, ClassMapping> = new Map([
  ['session.started', { classUid: AUTHENTICATION, activityId: 1, statusId: 1 }],
  ['session.ended', { classUid: AUTHENTICATION, activityId: 2, statusId: 1 }],
  ['tool.requested', { classUid: PROCESS_ACTIVITY, activityId: 1 }],
  ['tool.completed', { classUid: PROCESS_ACTIVITY, activityId: 2, statusId: 1 }],
  ['tool.failed', { classUid: PROCESS_ACTIVITY, activityId: 2, statusId: 2 }],
  // The event itself asserts the tool was blocked (§4.5).
  ['tool.denied', { classUid: PROCESS_ACTIVITY, activityId: 1, statusId: 2, dispositionId: 2 }],
  ['attention.requested', { classUid: DETECTION_FINDING, activityId: 1, statusId: 1 }],
  ['attention.answered', { classUid: DETECTION_FINDING, activityId: 2, statusId: 2 }],
  ['attention.resolved', { classUid: DETECTION_FINDING, activityId: 3, statusId: 4 }],
  // The request expired unanswered, which AEP-0002 §5 makes terminal: 16 No Action (§4.5).
  ['attention.timeout', { classUid: DETECTION_FINDING, activityId: 3, dispositionId: 16 }],
]);

/** AEP-0005 §4.4: monotone, lossy only at debug/info (the original rides `unmapped.aep.severity`). */
export const OCSF_SEVERITY_ID: Readonly<Record<Severity, number>> = { debug: 1, info: 1, notice: 2, warning: 3, error: 4, critical: 5 };

/** 16 No Action: what a dismissed attention request closes with (§4.5). */
const NO_ACTION = 16;

/** AEP-0005 §4.3: the OCSF record of `event` under the ceiling `maxCapture`, or undefined outside the §4.2 families. */
export function toOcsfRecord(event: AepEvent, maxCapture: CaptureLevel = DEFAULT_EXPORT_CEILING): JsonObject | undefined {
  const mapping = CLASS_MAPPING.get(event.type);
  if (mapping === undefined) return undefined;
  const payload = exportablePayload(event, maxCapture) ?? {};
  const severity: Severity = isSeverity(event.severity) ? event.severity : DEFAULT_SEVERITY;

  const { data: _payload, ...envelope } = event;
  const metadata: JsonObject = { version: OCSF_VERSION, uid: event.id, original_time: event.time, product: { name: event.agent } };
  if (event.cause !== undefined) metadata.correlation_uid = event.cause;
  const record: JsonObject = {
    class_uid: mapping.classUid,
    category_uid: CATEGORY_OF[mapping.classUid] as number,
    activity_id: mapping.activityId,
    type_uid: mapping.classUid * 100 + mapping.activityId,
    time: epochMillis(event.time) ?? 0,
    severity_id: OCSF_SEVERITY_ID[severity],
    message: event.type,
    metadata,
    // The fidelity carrier: the whole envelope (extensions included) and the surviving payload.
    unmapped: { aep: withoutUndefined(envelope), ...(Object.keys(payload).length > 0 ? { data: payload } : {}) },
  };
  if (mapping.statusId !== undefined) record.status_id = mapping.statusId;
  let dispositionId = mapping.dispositionId;

  switch (mapping.classUid) {
    case AUTHENTICATION:
      record.user = { name: event.agent };
      record.session = event.session === undefined ? {} : { uid: event.session };
      break;
    case PROCESS_ACTIVITY:
      record.actor = { app_name: event.agent };
      record.device = deviceOf(event.source);
      record.process = processOf(event, payload);
      break;
    default: {
      // One finding per attention lifecycle: the request's own id, then `subject` on every
      // later event (the correlation AEP-0002 §5 guarantees).
      const findingUid = event.type === 'attention.requested' ? event.id : event.subject;
      record.finding_info = { ...(findingUid === undefined ? {} : { uid: findingUid }), title: event.type };
      // An answered resolution carries no disposition: the wire does not say allowed or blocked.
      if (event.type === 'attention.resolved' && payload.resolution === 'dismissed') dispositionId = NO_ACTION;
    }
  }
  if (dispositionId !== undefined) {
    record.disposition_id = dispositionId;
    // The disposition attribute rides the security_control profile (§4.3).
    metadata.profiles = ['security_control'];
  }
  return record;
}

/** `device`: the source URI's authority as hostname when it has one, else the source verbatim as name. */
function deviceOf(source: string): JsonObject {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]+)/.exec(source)?.[1];
  return authority === undefined ? { type_id: 0, name: source } : { type_id: 0, hostname: authority };
}

/**
 * `process`: the tool name (the subject), plus the tool call id as `uid` when the surviving
 * payload carries it. Nothing is invented when it does not (§4.3, the documented edge).
 */
function processOf(event: AepEvent, payload: JsonObject): JsonObject {
  const tool: JsonValue | undefined = payload.tool;
  const toolName = isJsonObject(tool) && typeof tool.name === 'string' ? tool.name : undefined;
  const callId = isJsonObject(tool) && typeof tool.call_id === 'string' ? tool.call_id : undefined;
  const name = event.subject ?? toolName;
  return { ...(name === undefined ? {} : { name }), ...(callId === undefined ? {} : { uid: callId }) };
}

function withoutUndefined(object: Record<string, JsonValue | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(object).filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
}
