/**
 * The `attr-match` subscription filter dialect (AEP-0003 §6): validation that fails closed,
 * and compilation into a matcher that fan-out can run per event without re-reading the filter.
 *
 * Decisions beyond the spec text (each is a narrowing, never a widening):
 * - `severity` and `capture` equality/inclusion values must be members of their enums
 *   (AEP-0001 §8): a non-member can never match a valid event, so it is a client bug we report
 *   instead of silently subscribing to nothing. Other keys accept any scalar, as the grammar says.
 * - A severity band whose `gte` lies above its `lte` is rejected for the same reason.
 * - Integers outside the IEEE-754 safe range are rejected: they cannot be compared exactly.
 * - A `*` in a string on any key other than `type` is rejected as an unsupported glob
 *   (fixture "glob on non-type key"); AEP-0003 §9.6 keeps identifiers to `[A-Za-z0-9._-]`.
 */
import type { AepEvent, JsonValue } from './event.ts';
import { CORE_ATTRIBUTES, EXTENSION_NAME, isJsonObject } from './event.ts';
import type { Severity } from './levels.ts';
import { DEFAULT_CAPTURE, DEFAULT_SEVERITY, isCaptureLevel, isSeverity, severityRank } from './levels.ts';

/** A value compared by exact JSON equality (AEP-0003 §6.1 `Scalar`). */
export type FilterScalar = string | number | boolean;

/** Inclusive severity bounds (AEP-0003 §6.1 `SeverityCmp`); at least one is present. */
export interface SeverityComparison {
  readonly gte?: Severity;
  readonly lte?: Severity;
}

/** One filter member: equality, inclusion (any-of), or a severity comparison. */
export type FilterPredicate = FilterScalar | readonly FilterScalar[] | SeverityComparison;

/** A validated filter: every member must match (conjunction); `{}` matches every event. */
export type Filter = { readonly [attribute: string]: FilterPredicate };

/** A compiled filter. Accepts any envelope-shaped object, so `AepEvent` fits. */
export type EventMatcher = (event: MatchableEvent) => boolean;

/** What a matcher reads: top-level envelope attributes only (`data` is never consulted). */
export type MatchableEvent = AepEvent | { readonly [attribute: string]: JsonValue | undefined };

/** Outcome of {@link validateFilter}; the wire code for a failure is `invalid-filter`. */
export type FilterValidation = { ok: true; filter: Filter } | { ok: false; reason: string };

/** Core attributes a filter may name (AEP-0003 §6.2 rule 1). */
export const FILTERABLE_CORE_ATTRIBUTES: ReadonlySet<string> = new Set([
  'id', 'type', 'subject', 'source', 'agent', 'session', 'run', 'step', 'epoch', 'cause', 'severity', 'capture',
]);

/** Why each remaining core attribute is carried but never filtered (AEP-0003 §6.2 rule 1). */
const UNFILTERABLE_WHY: ReadonlyMap<string, string> = new Map([
  ['time', 'time is display metadata, never a routing key'],
  ['seq', 'positions are the resume mechanism (use `from`), not a filter'],
  ['aep', 'the envelope version is not a routing key'],
  ['traceparent', 'trace context is pass-through join metadata'],
  ['data', 'routing never parses payloads'],
]);

/** Defaults applied before matching when the event omits the attribute (AEP-0003 §6.2 rule 5). */
const ABSENT_DEFAULTS: ReadonlyMap<string, JsonValue> = new Map<string, JsonValue>([
  ['severity', DEFAULT_SEVERITY],
  ['capture', DEFAULT_CAPTURE],
  ['epoch', 0],
]);

const SEVERITY_COMPARISON_KEYS: ReadonlySet<string> = new Set(['gte', 'lte']);

/** Longest key or value echoed back in a reason; hostile input can be megabytes long. */
const QUOTE_LIMIT = 64;

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text);
}

type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Checks an untrusted filter (AEP-0003 §6.1–6.2) and returns a fresh copy on success.
 * Never throws; every failure names the offending key.
 */
export function validateFilter(value: unknown): FilterValidation {
  if (!isJsonObject(value)) {
    return { ok: false, reason: 'the filter must be a JSON object whose members are attribute predicates' };
  }
  const filter: Record<string, FilterPredicate> = {};
  for (const key of Object.keys(value)) {
    const keyProblem = checkKey(key);
    if (keyProblem !== undefined) return { ok: false, reason: keyProblem };
    const checked = checkPredicate(key, value[key]);
    if (!checked.ok) return checked;
    // `__proto__` cannot reach here: it fails the extension-name grammar in checkKey.
    filter[key] = checked.value;
  }
  return { ok: true, filter };
}

function checkKey(key: string): string | undefined {
  if (FILTERABLE_CORE_ATTRIBUTES.has(key)) return undefined;
  const why = UNFILTERABLE_WHY.get(key);
  if (why !== undefined) return `filter key ${quote(key)} is not filterable: ${why} (AEP-0003 §6.2)`;
  if (CORE_ATTRIBUTES.has(key)) return `filter key ${quote(key)} is not filterable (AEP-0003 §6.2)`;
  if (!EXTENSION_NAME.test(key)) {
    return `filter key ${quote(key)} is neither a filterable attribute nor a legal extension name ([a-z0-9]{1,20}, AEP-0001 §5.4)`;
  }
  return undefined;
}

function checkPredicate(key: string, value: JsonValue | undefined): Checked<FilterPredicate> {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return { ok: false, reason: `filter key ${quote(key)} has an empty inclusion array; it needs at least one value` };
    }
    const members: FilterScalar[] = [];
    for (const member of value) {
      const checked = checkScalar(key, member, 'an inclusion array member');
      if (!checked.ok) return checked;
      members.push(checked.value);
    }
    return { ok: true, value: members };
  }
  if (isJsonObject(value)) {
    if (key !== 'severity') {
      return { ok: false, reason: `filter key ${quote(key)} takes a scalar or an array of scalars; objects are only allowed as a severity comparison` };
    }
    return checkSeverityComparison(value);
  }
  return checkScalar(key, value, 'its value');
}

function checkScalar(key: string, value: JsonValue | undefined, what: string): Checked<FilterScalar> {
  if (typeof value === 'boolean') return checkEnumMember(key, value, what);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      return { ok: false, reason: `filter key ${quote(key)}: ${what} must be a string, a safe integer or a boolean, not ${value}` };
    }
    return checkEnumMember(key, value, what);
  }
  if (typeof value === 'string') {
    if (value.includes('*')) return checkPattern(key, value, what);
    return checkEnumMember(key, value, what);
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : 'missing';
  return { ok: false, reason: `filter key ${quote(key)}: ${what} must be a string, an integer or a boolean, not ${kind}` };
}

function checkEnumMember(key: string, value: FilterScalar, what: string): Checked<FilterScalar> {
  if (key === 'severity' && !isSeverity(value)) {
    return { ok: false, reason: `filter key "severity": ${what} must be one of debug, info, notice, warning, error, critical` };
  }
  if (key === 'capture' && !isCaptureLevel(value)) {
    return { ok: false, reason: `filter key "capture": ${what} must be one of none, metadata, redacted, full` };
  }
  return { ok: true, value };
}

/** Only `type` takes patterns, and only the `prefix.*` form (AEP-0003 §6.2 rule 3). */
function checkPattern(key: string, value: string, what: string): Checked<FilterScalar> {
  if (key !== 'type') {
    return { ok: false, reason: `filter key ${quote(key)}: ${what} ${quote(value)} looks like a glob; patterns are only allowed on "type"` };
  }
  const prefix = value.slice(0, -2);
  if (!value.endsWith('.*') || prefix === '' || prefix.includes('*')) {
    return { ok: false, reason: `filter key "type": ${what} ${quote(value)} is not a pattern; the only form is "prefix.*" with a non-empty prefix (a bare "*" is not a pattern)` };
  }
  return { ok: true, value };
}

function checkSeverityComparison(value: { [key: string]: JsonValue }): Checked<FilterPredicate> {
  const keys = Object.keys(value);
  const stray = keys.find((key) => !SEVERITY_COMPARISON_KEYS.has(key));
  if (stray !== undefined) {
    return { ok: false, reason: `filter key "severity": ${quote(stray)} is not a comparison operator; only "gte" and "lte" are` };
  }
  if (keys.length === 0) {
    return { ok: false, reason: 'filter key "severity": a comparison needs "gte", "lte" or both' };
  }
  const comparison: { gte?: Severity; lte?: Severity } = {};
  for (const bound of ['gte', 'lte'] as const) {
    if (!Object.hasOwn(value, bound)) continue;
    const level = value[bound];
    if (!isSeverity(level)) {
      return { ok: false, reason: `filter key "severity": "${bound}" must be one of debug, info, notice, warning, error, critical` };
    }
    comparison[bound] = level;
  }
  if (comparison.gte !== undefined && comparison.lte !== undefined && severityRank(comparison.gte) > severityRank(comparison.lte)) {
    return { ok: false, reason: `filter key "severity": "gte" ${comparison.gte} lies above "lte" ${comparison.lte}, so nothing could match` };
  }
  return { ok: true, value: comparison };
}

type AttributeTest = (value: JsonValue) => boolean;

/**
 * Compiles a filter from {@link validateFilter} into a matcher. Inclusion arrays become Sets,
 * type patterns become prefix lists, severity bounds become ranks, so matching never re-parses.
 */
export function compileFilter(filter: Filter): EventMatcher {
  const tests: Array<{ key: string; test: AttributeTest }> = [];
  for (const key of Object.keys(filter)) {
    const predicate = filter[key];
    if (predicate === undefined) continue;
    tests.push({ key, test: compilePredicate(key, predicate) });
  }
  if (tests.length === 0) return () => true;
  return (event) => {
    for (const { key, test } of tests) {
      const value = readAttribute(event, key);
      if (value === undefined || !test(value)) return false;
    }
    return true;
  };
}

/**
 * Reads an own attribute only: a prototype member such as `constructor` (a legal extension
 * name) must read as absent, not as a function.
 */
function readAttribute(event: MatchableEvent, key: string): JsonValue | undefined {
  const present = Object.hasOwn(event, key) ? (event as Record<string, JsonValue | undefined>)[key] : undefined;
  return present === undefined ? ABSENT_DEFAULTS.get(key) : present;
}

function compilePredicate(key: string, predicate: FilterPredicate): AttributeTest {
  if (Array.isArray(predicate)) return compileInclusion(key, predicate);
  if (typeof predicate === 'object') return compileSeverityComparison(predicate as SeverityComparison);
  if (key === 'type' && typeof predicate === 'string' && predicate.endsWith('.*')) {
    return compileInclusion(key, [predicate]);
  }
  // `===` on primitives is exact JSON equality: 1 !== "1", true !== "true".
  return (value) => value === predicate;
}

function compileInclusion(key: string, members: readonly FilterScalar[]): AttributeTest {
  const exact = new Set<JsonValue>();
  // Stored as "prefix." so a test is one startsWith plus a length check.
  const prefixes: string[] = [];
  for (const member of members) {
    if (key === 'type' && typeof member === 'string' && member.endsWith('.*')) prefixes.push(member.slice(0, -1));
    else exact.add(member);
  }
  if (prefixes.length === 0) return (value) => exact.has(value);
  return (value) => {
    if (exact.has(value)) return true;
    if (typeof value !== 'string') return false;
    // "Strictly beginning with": `attention.*` must not match the bare `attention.`.
    for (const prefix of prefixes) if (value.length > prefix.length && value.startsWith(prefix)) return true;
    return false;
  };
}

function compileSeverityComparison(comparison: SeverityComparison): AttributeTest {
  const low = comparison.gte === undefined ? 0 : severityRank(comparison.gte);
  const high = comparison.lte === undefined ? Number.POSITIVE_INFINITY : severityRank(comparison.lte);
  return (value) => {
    if (!isSeverity(value)) return false;
    const rank = severityRank(value);
    return rank >= low && rank <= high;
  };
}

/**
 * The `session` values a filter pins, so fan-out can index subscriptions by session;
 * `undefined` when the filter does not constrain `session`. Non-string members are dropped:
 * a session is always a string, so they can never match (an empty list pins nothing).
 */
export function sessionEqualityOf(filter: Filter): string[] | undefined {
  if (!Object.hasOwn(filter, 'session')) return undefined;
  const predicate = filter['session'];
  if (typeof predicate === 'string') return [predicate];
  if (Array.isArray(predicate)) return [...new Set(predicate.filter((member): member is string => typeof member === 'string'))];
  if (typeof predicate === 'number' || typeof predicate === 'boolean') return [];
  return undefined;
}

/**
 * The first dot-segment (`tool` of `tool.requested` and of `tool.*`) of every `type` a filter
 * accepts, so fan-out can index unpinned subscriptions by what they can match and read only
 * the ones a batch's types could reach; `undefined` when the filter does not constrain `type`.
 * A pattern's prefix always holds its first segment whole (`prefix.*`, non-empty prefix), so an
 * event whose type's first segment is not listed can never match. Non-strings never match.
 */
export function typeSegmentsOf(filter: Filter): string[] | undefined {
  if (!Object.hasOwn(filter, 'type')) return undefined;
  const predicate = filter['type'];
  const members = typeof predicate === 'string' ? [predicate] : Array.isArray(predicate) ? predicate : [];
  return [...new Set(members.filter((member): member is string => typeof member === 'string').map(firstTypeSegment))];
}

/** The category part of a type, or of a vendor type its `x`: what `typeSegmentsOf` indexes by. */
export function firstTypeSegment(type: string): string {
  const dot = type.indexOf('.');
  return dot === -1 ? type : type.slice(0, dot);
}
