/**
 * Envelope validation (AEP-0001 §5, §6, §8): the checks a relay runs on every event it
 * ingests (AEP-0003 §3.2). Payloads are not inspected here beyond "data is an object"
 * (AEP-0001 §5: relays never need to parse `data`).
 *
 * The validator collects every violation rather than stopping at the first, and returns
 * them as data: whatever the input (arrays, hostile getters, `__proto__` keys, huge
 * numbers), it never throws.
 */
import type { AepEvent } from './event.ts';
import { CORE_ATTRIBUTES, EXTENSION_NAME, SUPPORTED_VERSIONS, isJsonObject } from './event.ts';
import { CAPTURE_LEVELS, SEVERITIES, isCaptureLevel, isSeverity } from './levels.ts';
import { parseType, typeScope } from './type-grammar.ts';
import type { Violation } from './violation.ts';
import { violation } from './violation.ts';

/** The outcome of validating one event: the typed event, or every violation found. */
export type ValidationResult = { ok: true; event: AepEvent } | { ok: false; violations: Violation[] };

/** Beyond this many, further violations are summarized so a hostile event cannot amplify a reply. */
export const MAX_REPORTED_VIOLATIONS = 50;

const REQUIRED = ['aep', 'id', 'type', 'time', 'source', 'agent'] as const;

// Row numbers of the context-attribute table (AEP-0001 §5.1), used to cite per-attribute rules.
const ROW: Readonly<Record<string, number>> = {
  aep: 1, id: 2, type: 3, subject: 4, time: 5, source: 6, agent: 7, session: 8, run: 9,
  step: 10, seq: 11, epoch: 12, cause: 13, traceparent: 14, severity: 15, capture: 16, data: 17,
};

const STRING_ATTRIBUTES = ['id', 'type', 'subject', 'time', 'source', 'agent', 'session', 'run', 'step', 'cause'] as const;

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
// RFC 3339 §5.6 date-time; 'T' and 'Z' are case-insensitive there. A timezone is mandatory.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// Whitespace and control characters can never appear in an RFC 3986 URI.
const URI_FORBIDDEN = /[\s\u0000-\u001f\u007f]/u;

/** Marks an own property defined by a getter/setter: never a JSON value, and never invoked. */
const ACCESSOR = Symbol('accessor');

/** Every way `value` breaks the envelope rules; empty when it is a valid AEP 0.1 envelope. */
export function envelopeViolations(value: unknown): Violation[] {
  let found: Violation[];
  try {
    found = collect(value);
  } catch {
    // Only exotic objects (proxies, frozen oddities) reach here; JSON.parse output never does.
    found = [violation('AEP-0001 §5', 'the event could not be inspected as a plain JSON object')];
  }
  return cap(found);
}

/** Validates an envelope and, when valid, returns it typed as an {@link AepEvent}. */
export function validateEnvelope(value: unknown): ValidationResult {
  const violations = envelopeViolations(value);
  return violations.length === 0 ? { ok: true, event: value as AepEvent } : { ok: false, violations };
}

function collect(value: unknown): Violation[] {
  if (!isJsonObject(value)) {
    return [violation('AEP-0001 §5', `an event must be a JSON object, not ${describe(value)}`)];
  }
  const attributes = ownEntries(value);
  const out: Violation[] = [];

  for (const name of REQUIRED) {
    if (!attributes.has(name)) out.push(violation('AEP-0001 §5.1', `required attribute "${name}" is missing`, name));
  }

  // Absent optional attributes are omitted, never null (AEP-0001 §5.1); a null also fails the
  // attribute's type, but one violation per attribute is enough, so nulls skip the checks below.
  for (const [name, attribute] of attributes) {
    if (attribute === null && CORE_ATTRIBUTES.has(name)) {
      out.push(violation('AEP-0001 §5.1', `"${name}" is null; omit an attribute rather than setting it to null`, name));
    }
  }
  const present = (name: string): unknown => {
    const attribute = attributes.get(name);
    return attribute === null ? undefined : attribute;
  };

  const aep = present('aep');
  if (aep !== undefined && !(SUPPORTED_VERSIONS as readonly unknown[]).includes(aep)) {
    out.push(violation('AEP-0001 §5.1 #1', `"aep" must be one of ${SUPPORTED_VERSIONS.join(', ')}, got ${describe(aep)}`, 'aep'));
  }

  for (const name of STRING_ATTRIBUTES) {
    const attribute = present(name);
    if (attribute === undefined) continue;
    if (typeof attribute !== 'string') {
      out.push(violation(rowRule(name), `"${name}" must be a string, got ${describe(attribute)}`, name));
    } else if (attribute === '') {
      out.push(violation(rowRule(name), `"${name}" must not be empty`, name));
    }
  }

  const type = present('type');
  if (typeof type === 'string' && type !== '') {
    const parsed = parseType(type);
    if (!parsed.ok) out.push(violation(parsed.rule, parsed.message, 'type'));
  }

  const time = present('time');
  if (typeof time === 'string' && time !== '' && !isRfc3339DateTime(time)) {
    out.push(violation('AEP-0001 §5.1 #5', `"time" must be an RFC 3339 date-time with a timezone, e.g. 2026-07-03T10:15:04.221Z`, 'time'));
  }

  const source = present('source');
  if (typeof source === 'string' && source !== '' && !isUri(source)) {
    out.push(violation('AEP-0001 §5.1 #6', '"source" must be a URI with a scheme and no whitespace, e.g. aep://host/agent/name', 'source'));
  }

  for (const name of ['seq', 'epoch'] as const) {
    const counter = present(name);
    if (counter !== undefined && !isCounter(counter)) {
      out.push(violation(rowRule(name), `"${name}" must be a non-negative integer no larger than 2^53-1, got ${describe(counter)}`, name));
    }
  }

  const traceparent = present('traceparent');
  if (traceparent !== undefined && !(typeof traceparent === 'string' && TRACEPARENT.test(traceparent))) {
    out.push(violation('AEP-0001 §5.1 #14', '"traceparent" must be a W3C Trace Context value: 00-{32 hex}-{16 hex}-{2 hex}', 'traceparent'));
  }

  const severity = present('severity');
  if (severity !== undefined && !isSeverity(severity)) {
    out.push(violation('AEP-0001 §8.1', `"severity" must be one of ${SEVERITIES.join(', ')}, got ${describe(severity)}`, 'severity'));
  }

  const capture = present('capture');
  if (capture !== undefined && !isCaptureLevel(capture)) {
    out.push(violation('AEP-0001 §8.2', `"capture" must be one of ${CAPTURE_LEVELS.join(', ')}, got ${describe(capture)}`, 'capture'));
  }

  const data = present('data');
  if (data !== undefined && !isJsonObject(data)) {
    out.push(violation('AEP-0001 §5.1 #17', `"data" must be a JSON object, got ${describe(data)}`, 'data'));
  }

  if (typeof type === 'string') out.push(...scopeViolations(type, present));

  for (const [name, attribute] of attributes) {
    if (CORE_ATTRIBUTES.has(name)) continue;
    out.push(...extensionViolations(name, attribute));
  }
  return out;
}

/** Session attributes each scope requires or forbids (AEP-0001 §5.2, AEP-0004 §2.2). */
function scopeViolations(type: string, present: (name: string) => unknown): Violation[] {
  const out: Violation[] = [];
  const has = (name: string) => present(name) !== undefined;
  switch (typeScope(type)) {
    case 'agent':
      for (const name of ['session', 'run', 'step', 'seq']) {
        if (has(name)) {
          out.push(violation('AEP-0001 §5.2', `agent-scoped "${type}" describes the emitter, not a session: omit "${name}"`, name));
        }
      }
      break;
    case 'command':
      // The sender does not own the target session's order, so it cannot assign a position.
      if (!has('session')) out.push(violation('AEP-0004 §2.2', `command "${type}" must name its target "session"`, 'session'));
      if (has('seq')) out.push(violation('AEP-0004 §2.2', `command "${type}" must omit "seq": the sender does not own the target session's order`, 'seq'));
      break;
    case 'foreign':
      if (!has('session')) out.push(violation('AEP-0001 §5.2', `"${type}" must carry the original "session"`, 'session'));
      if (has('seq')) out.push(violation('AEP-0001 §5.2', `"${type}" is emitted by a consumer and must omit "seq" (AEP-0002 §7.3)`, 'seq'));
      break;
    case 'session':
      if (!has('session')) out.push(violation('AEP-0001 §5.2', `session-scoped "${type}" must carry "session"`, 'session'));
      if (!has('seq')) out.push(violation('AEP-0001 §5.2', `session-scoped "${type}" must carry "seq"`, 'seq'));
      break;
  }
  return out;
}

/** Extension attributes: CloudEvents-compatible name and a scalar value (AEP-0001 §5.4). */
function extensionViolations(name: string, attribute: unknown): Violation[] {
  const out: Violation[] = [];
  if (!EXTENSION_NAME.test(name)) {
    out.push(violation('AEP-0001 §5.4', `extension attribute name "${clip(name)}" must match [a-z0-9]{1,20}`, name));
  }
  const scalar =
    typeof attribute === 'string' ||
    typeof attribute === 'boolean' ||
    (typeof attribute === 'number' && Number.isInteger(attribute));
  if (!scalar) {
    out.push(violation('AEP-0001 §5.4', `extension attribute "${clip(name)}" must be a string, integer or boolean, got ${describe(attribute)}`, name));
  }
  return out;
}

/** RFC 3339 `date-time` with a mandatory offset, and every field in range. */
function isRfc3339DateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (match === null) return false;
  const [, year, month, day, hour, minute, second, zulu, sign, offsetHour, offsetMinute] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = Number(second);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return false;
  if (h > 23 || mi > 59 || s > 60) return false;
  let offset = 0;
  if (zulu === undefined) {
    const oh = Number(offsetHour);
    const om = Number(offsetMinute);
    if (oh > 23 || om > 59) return false;
    offset = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  if (s === 60) {
    // A leap second only ever happens at 23:59:60 UTC (RFC 3339 §5.7).
    const utcMinute = (((h * 60 + mi - offset) % 1440) + 1440) % 1440;
    if (utcMinute !== 23 * 60 + 59) return false;
  }
  return true;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isUri(text: string): boolean {
  return URI_SCHEME.test(text) && !URI_FORBIDDEN.test(text);
}

/** A `seq`/`epoch` value: a JSON integer >= 0 that survives JSON round-trips exactly. */
function isCounter(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The object's own enumerable string-keyed properties. Reads descriptors rather than
 * `object[key]` so inherited properties never count and getters never run. A `__proto__`
 * key produced by JSON.parse is an ordinary own property here (and fails the extension name rule).
 */
function ownEntries(object: object): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const key of Object.keys(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, key);
    if (descriptor === undefined) continue;
    entries.set(key, 'value' in descriptor ? descriptor.value : ACCESSOR);
  }
  return entries;
}

function rowRule(name: string): string {
  const row = ROW[name];
  return row === undefined ? 'AEP-0001 §5.1' : `AEP-0001 §5.1 #${row}`;
}

function cap(found: Violation[]): Violation[] {
  if (found.length <= MAX_REPORTED_VIOLATIONS) return found;
  const kept = found.slice(0, MAX_REPORTED_VIOLATIONS - 1);
  const next = found[MAX_REPORTED_VIOLATIONS - 1] as Violation;
  kept.push(violation(next.rule, `${found.length - kept.length} further violations not listed`));
  return kept;
}

/** A short, safe description of a value for messages (never echoes large content). */
function describe(value: unknown): string {
  if (value === ACCESSOR) return 'an accessor property';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(clip(value));
    case 'number':
      return Number.isFinite(value) ? String(value) : 'a non-finite number';
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
