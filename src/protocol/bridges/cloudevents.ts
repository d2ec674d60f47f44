/**
 * The CloudEvents bridge (AEP-0005 §1, §2): an AEP event as a CloudEvents 1.0 event in the
 * JSON format (structured mode), and the inverse. The envelope is CE-isomorphic by design, so
 * the forward map is five rules and one table and the inverse restores the original event
 * exactly (AEP-0005 §5.1, modulo member order).
 */
import type { AepEvent, JsonObject, JsonValue } from '../event.ts';
import { CORE_ATTRIBUTES, EXTENSION_NAME, isJsonObject } from '../event.ts';

/** The frozen reverse-DNS root prefixed to every AEP type at the bridges (AEP-0005 B3, AEP-0001 §6). */
export const AEP_TYPE_ROOT = 'dev.aep.';

/** Media types of the CloudEvents JSON format: one event, and a batch (a JSON array of events). */
export const CLOUDEVENTS_JSON = 'application/cloudevents+json';
export const CLOUDEVENTS_BATCH_JSON = 'application/cloudevents-batch+json';

/** AEP attribute -> prefixed CE extension attribute (AEP-0005 §1 table, B4). */
const PREFIXED: ReadonlyArray<readonly [string, string]> = [
  ['aep', 'aepversion'],
  ['agent', 'aepagentid'],
  ['session', 'aepsessionid'],
  ['run', 'aeprunid'],
  ['step', 'aepstep'],
  ['seq', 'aepsequence'],
  ['epoch', 'aepepoch'],
  ['cause', 'aepcausationid'],
  ['severity', 'aepseverity'],
  ['capture', 'aepcapture'],
];
const AEP_NAME_OF: ReadonlyMap<string, string> = new Map(PREFIXED.map(([aep, ce]) => [ce, aep]));

/** Attributes copied verbatim in both directions (B2), and the trace context (B5). */
const PASS_THROUGH = ['id', 'source', 'subject', 'time'] as const;

/** CE attributes the inverse consumes itself; every other one is an extension candidate. */
const CE_HANDLED: ReadonlySet<string> = new Set(['specversion', 'datacontenttype', 'type', 'data', 'traceparent', ...PASS_THROUGH, ...AEP_NAME_OF.keys()]);

/** The AEP-0001 §5.1 attributes the forward map places itself; the rest are extensions (§5.4). */
const FORWARD_HANDLED: ReadonlySet<string> = new Set(['type', 'data', 'traceparent', ...PASS_THROUGH, ...PREFIXED.map(([aep]) => aep)]);

/** A CloudEvent in the JSON format: attributes and `data` as one object. */
export type CloudEvent = JsonObject;

/** AEP-0005 §1: the CloudEvents form of an event. Absent optional attributes produce none (defaults are not materialized). */
export function toCloudEvent(event: AepEvent): CloudEvent {
  const cloudEvent: CloudEvent = { specversion: '1.0', id: event.id, source: event.source, type: AEP_TYPE_ROOT + event.type };
  if (event.subject !== undefined) cloudEvent.subject = event.subject;
  cloudEvent.time = event.time;
  if (event.data !== undefined) cloudEvent.datacontenttype = 'application/json';
  for (const [aepName, ceName] of PREFIXED) {
    const value = event[aepName];
    if (value !== undefined) cloudEvent[ceName] = value;
  }
  if (event.traceparent !== undefined) cloudEvent.traceparent = event.traceparent;
  // Extension attributes already follow CE's naming rule (AEP-0001 §5.4), so they pass as they are.
  for (const [name, value] of Object.entries(event)) {
    if (value !== undefined && !FORWARD_HANDLED.has(name)) cloudEvent[name] = value;
  }
  if (event.data !== undefined) cloudEvent.data = event.data;
  return cloudEvent;
}

/** Why a CloudEvent cannot become an AEP event. */
export type CloudEventRefusal =
  /** AEP-0005 §2.3: a foreign CE type is out of the bridge's scope. */
  | { code: 'foreign-type'; rule: 'AEP-0005 §2.3'; detail: string }
  /** Not a CloudEvents 1.0 JSON-format event the inverse can read. */
  | { code: 'not-a-cloudevent'; rule: string; detail: string };

export type CloudEventInverse =
  | {
      ok: true;
      /** The AEP envelope the §2 rules produce; not yet validated (admission does that). */
      event: JsonObject;
      /** Extension attributes dropped because they cannot ride the envelope (AEP-0005 §2 rule 2). */
      dropped: string[];
    }
  | { ok: false; refusal: CloudEventRefusal };

/**
 * AEP-0005 §2: the AEP event a CloudEvent carries. Drops the B1 constants, strips the B3 root,
 * reverses the B4/B5 table and passes B2 through. Unknown extension attributes are kept when
 * they are legal AEP extensions (name `[a-z0-9]{1,20}`, no collision with a core attribute, a
 * scalar value) and otherwise dropped and listed (§2 rule 2).
 */
export function fromCloudEvent(value: unknown): CloudEventInverse {
  if (!isJsonObject(value)) return notCloudEvent('AEP-0005 §2', 'a CloudEvent in the JSON format is a JSON object');
  if (value.specversion !== '1.0') return notCloudEvent('AEP-0005 §1 B1', `"specversion" must be "1.0", got ${brief(value.specversion)}`);
  const type = value.type;
  if (typeof type !== 'string' || !type.startsWith(AEP_TYPE_ROOT)) {
    return { ok: false, refusal: { code: 'foreign-type', rule: 'AEP-0005 §2.3', detail: `CE type ${brief(type)} is not under the ${AEP_TYPE_ROOT} root; foreign CloudEvents are out of the bridge's scope` } };
  }
  if (Object.hasOwn(value, 'data_base64')) return notCloudEvent('AEP-0005 §2', 'binary "data_base64" cannot carry an AEP payload (a JSON object)');
  const contentType = value.datacontenttype;
  if (contentType !== undefined && (typeof contentType !== 'string' || contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json')) {
    return notCloudEvent('AEP-0005 §1 B1', `"datacontenttype" must be application/json, got ${brief(contentType)}`);
  }

  const event: JsonObject = {};
  const version = value.aepversion;
  if (version !== undefined) event.aep = version;
  if (value.id !== undefined) event.id = value.id;
  event.type = type.slice(AEP_TYPE_ROOT.length);
  for (const name of PASS_THROUGH) {
    if (name !== 'id' && value[name] !== undefined) event[name] = value[name] as JsonValue;
  }
  for (const [ceName, aepName] of AEP_NAME_OF) {
    if (aepName !== 'aep' && value[ceName] !== undefined) event[aepName] = value[ceName] as JsonValue;
  }
  if (value.traceparent !== undefined) event.traceparent = value.traceparent;

  const dropped: string[] = [];
  for (const [name, attribute] of Object.entries(value)) {
    if (CE_HANDLED.has(name)) continue;
    if (isLegalExtension(name, attribute)) event[name] = attribute;
    else dropped.push(name);
  }
  if (value.data !== undefined) event.data = value.data;
  return { ok: true, event, dropped };
}

/** AEP-0001 §5.4: a name CE would also accept, not a core attribute, and a scalar value. */
function isLegalExtension(name: string, attribute: JsonValue): boolean {
  if (!EXTENSION_NAME.test(name) || CORE_ATTRIBUTES.has(name)) return false;
  return typeof attribute === 'string' || typeof attribute === 'boolean' || (typeof attribute === 'number' && Number.isSafeInteger(attribute));
}

function notCloudEvent(rule: string, detail: string): CloudEventInverse {
  return { ok: false, refusal: { code: 'not-a-cloudevent', rule, detail } };
}

/** A short, safe rendering of a value for a refusal message. */
function brief(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  if (value === undefined) return 'nothing';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
