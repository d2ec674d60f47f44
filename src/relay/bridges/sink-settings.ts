/**
 * A tenant's bridge sinks (AEP-0005 §3.5, §4.1: each bridge is an ordinary consumer with an
 * operator-scoped filter and its own capture ceiling), as the admin API takes them. Parsing is
 * pure and fails naming the sink and the setting; secrets (OTLP headers) are returned apart
 * from the public settings so only the sealed form is ever stored.
 */
import { disallowedAddress, isAddressLiteral } from '../domain/outbound-address.ts';
import type { AddressRule } from '../domain/outbound-address.ts';
import { validateFilter } from '../../protocol/attr-match.ts';
import { isJsonObject } from '../../protocol/event.ts';
import type { JsonValue } from '../../protocol/event.ts';
import { CAPTURE_LEVELS, isCaptureLevel } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import { DEFAULT_EXPORT_CEILING } from '../../protocol/bridges/export-ceiling.ts';

export const SINK_KINDS = ['eventbridge', 'otlp', 'cloudevents-webhook', 'ocsf-webhook'] as const;
export type SinkKind = (typeof SINK_KINDS)[number];

/** Most sinks one tenant may configure: each adds requests per delivered batch. */
export const MAX_SINKS_PER_TENANT = 8;
/** Most agents one sink may be bound to (as many as a token's binding). */
const MAX_SINK_AGENTS = 100;
/** Most headers one OTLP sink may carry, and their longest value. */
const MAX_HEADERS = 16;
const MAX_HEADER_VALUE = 4096;

/** What a sink does with the tenant's events; nothing secret. */
export interface SinkSettings {
  /** Unique within the tenant: `[a-z0-9-]{1,40}`. */
  name: string;
  kind: SinkKind;
  /** Type patterns (`tool.completed`, `tool.*`); absent: every type (AEP-0003 §6.2 `type` predicate). */
  types?: string[];
  /** Nothing above this capture level leaves the relay (AEP-0005 §3.3, §4.6). Default `metadata`. */
  maxCapture: CaptureLevel;
  /**
   * Only events whose `agent` is listed; absent: every agent's. A token bound to agents sets
   * only sinks bound to a subset of them, as it issues only tokens so bound.
   */
  agents?: string[];
  /** Where it goes: a webhook or OTLP endpoint URL, or an EventBridge bus ARN. */
  target: string;
  /** OTLP only: names of the headers the tenant supplied (their values are secret). */
  headerNames?: string[];
}

export interface ParsedSink {
  settings: SinkSettings;
  /** OTLP headers as supplied; sealed before storage, never listed back. */
  headers?: Record<string, string>;
  /** Webhooks: mint a new signing secret even if the sink already has one. */
  rotateSecret: boolean;
}

export type SinkSetParse = { ok: true; sinks: ParsedSink[] } | { ok: false; reason: string };

const SINK_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
// Headers the transport itself sets; a tenant value would be overridden or break framing.
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection']);
const EVENT_BUS_ARN = /^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._\-/]{1,256}$/;

/** What the deployment allows a sink to name. */
export interface SinkRules {
  /** EventBridge buses the deployment may put events on. */
  allowedEventBuses: readonly string[];
  /** Which addresses a URL may name (loopback in the local stack only). */
  addresses: AddressRule;
}

/**
 * Parses `{ "sinks": [ … ] }`, the whole set a tenant's bridges deliver to. A sink without
 * `maxCapture` gets `defaultMaxCapture` (`metadata`, or lower where the setting token reads lower).
 */
export function parseSinkSet(body: unknown, rules: SinkRules, defaultMaxCapture: CaptureLevel = DEFAULT_EXPORT_CEILING): SinkSetParse {
  if (!isJsonObject(body) || !Array.isArray(body.sinks)) return fail('the body is a JSON object { "sinks": [ … ] }');
  if (body.sinks.length > MAX_SINKS_PER_TENANT) return fail(`at most ${MAX_SINKS_PER_TENANT} sinks per tenant, got ${body.sinks.length}`);
  const sinks: ParsedSink[] = [];
  const names = new Set<string>();
  for (const [index, entry] of body.sinks.entries()) {
    const parsed = parseSink(entry, rules, defaultMaxCapture);
    if (typeof parsed === 'string') return fail(`sinks[${index}]: ${parsed}`);
    if (names.has(parsed.settings.name)) return fail(`sinks[${index}]: the name ${JSON.stringify(parsed.settings.name)} is used twice`);
    names.add(parsed.settings.name);
    sinks.push(parsed);
  }
  return { ok: true, sinks };
}

const KNOWN_MEMBERS: Readonly<Record<SinkKind, readonly string[]>> = {
  eventbridge: ['busArn'],
  otlp: ['endpoint', 'headers'],
  'cloudevents-webhook': ['url', 'rotateSecret'],
  'ocsf-webhook': ['url', 'rotateSecret'],
};
const COMMON_MEMBERS = ['name', 'kind', 'types', 'maxCapture', 'agents'];

function parseSink(entry: JsonValue, rules: SinkRules, defaultMaxCapture: CaptureLevel): ParsedSink | string {
  if (!isJsonObject(entry)) return 'each sink is a JSON object';
  const { name, kind } = entry;
  if (typeof name !== 'string' || !SINK_NAME.test(name)) return '"name" is 1 to 40 of a-z, 0-9 and -, starting and ending with a letter or digit';
  if (typeof kind !== 'string' || !(SINK_KINDS as readonly string[]).includes(kind)) return `"kind" is one of ${SINK_KINDS.join(', ')}`;
  const sinkKind = kind as SinkKind;
  const unknown = Object.keys(entry).filter((member) => !COMMON_MEMBERS.includes(member) && !KNOWN_MEMBERS[sinkKind].includes(member));
  if (unknown.length > 0) return `unknown setting ${JSON.stringify(unknown[0])} for a ${sinkKind} sink`;

  const maxCapture = entry.maxCapture ?? defaultMaxCapture;
  if (!isCaptureLevel(maxCapture)) return `"maxCapture" is one of ${CAPTURE_LEVELS.join(', ')}`;
  const types = parseTypes(entry.types);
  if (typeof types === 'string') return types;
  const agents = entry.agents;
  if (agents !== undefined && (!Array.isArray(agents) || agents.length === 0 || agents.length > MAX_SINK_AGENTS || !agents.every((agent) => typeof agent === 'string' && agent !== '' && agent.length <= 256))) {
    return `"agents" is an array of 1 to ${MAX_SINK_AGENTS} agent names`;
  }
  const rotateSecret = entry.rotateSecret ?? false;
  if (typeof rotateSecret !== 'boolean') return '"rotateSecret" is a boolean';

  const common = { name, kind: sinkKind, maxCapture, ...(types === undefined ? {} : { types }), ...(agents === undefined ? {} : { agents: [...new Set(agents as string[])] }) };
  switch (sinkKind) {
    case 'eventbridge': {
      const busArn = entry.busArn;
      if (typeof busArn !== 'string' || !EVENT_BUS_ARN.test(busArn)) return '"busArn" is an EventBridge event bus ARN (arn:aws:events:{region}:{account}:event-bus/{name})';
      // IAM grants events:PutEvents on the deployment's configured buses only (least privilege).
      if (!rules.allowedEventBuses.includes(busArn)) return `the bus ${busArn} is not one this deployment may put events on; add it to the stack's bridge event buses (-c bridgeEventBuses deployed, AEP_BRIDGE_EVENT_BUSES on npm start)`;
      return { settings: { ...common, target: busArn }, rotateSecret };
    }
    case 'otlp': {
      const endpoint = parseUrl(entry.endpoint, 'endpoint', rules.addresses);
      if (!endpoint.ok) return endpoint.reason;
      const headers = parseHeaders(entry.headers);
      if (typeof headers === 'string') return headers;
      return { settings: { ...common, target: endpoint.url, headerNames: Object.keys(headers) }, headers, rotateSecret };
    }
    default: {
      const url = parseUrl(entry.url, 'url', rules.addresses);
      if (!url.ok) return url.reason;
      return { settings: { ...common, target: url.url }, rotateSecret };
    }
  }
}

function parseTypes(value: JsonValue | undefined): string[] | undefined | string {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((type) => typeof type === 'string')) return '"types" is a non-empty array of type patterns';
  const checked = validateFilter({ type: value });
  if (!checked.ok) return `"types": ${checked.reason}`;
  return value as string[];
}

/**
 * An https URL to an address the deployment allows (a literal disallowed address is refused
 * here; a name is checked on every address it resolves to when a request connects). Plain
 * http only to loopback where loopback is allowed (the local stack's receivers). Push
 * subscriptions' endpoints follow the same rule (`push/push-registration.ts`).
 */
export function parseUrl(value: JsonValue | undefined, member: string, addresses: AddressRule): { ok: true; url: string } | { ok: false; reason: string } {
  if (typeof value !== 'string') return { ok: false, reason: `"${member}" is an https URL` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: `"${member}" is not a URL` };
  }
  const refused = disallowedAddress(url.hostname, addresses);
  if (refused !== undefined) return { ok: false, reason: `"${member}" names a ${refused} address, which sinks may not reach` };
  const loopback = addresses.allowLoopback && (url.hostname === 'localhost' || (isAddressLiteral(url.hostname) && disallowedAddress(url.hostname, { allowLoopback: false }) === 'loopback'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return { ok: false, reason: `"${member}" must use https${addresses.allowLoopback ? ' (plain http is allowed to localhost only)' : ''}` };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: `"${member}" must not carry credentials; OTLP sinks take them as headers` };
  return { ok: true, url: url.toString() };
}

function parseHeaders(value: JsonValue | undefined): Record<string, string> | string {
  if (value === undefined) return {};
  if (!isJsonObject(value)) return '"headers" is an object of header names to string values';
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) return `at most ${MAX_HEADERS} headers`;
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of entries) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) return `header ${JSON.stringify(name.slice(0, 64))} is not a header this sink may set`;
    if (typeof headerValue !== 'string' || headerValue.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(headerValue)) return `header ${JSON.stringify(name)} needs a single-line string value of at most ${MAX_HEADER_VALUE} characters`;
    headers[name.toLowerCase()] = headerValue;
  }
  return headers;
}

function fail(reason: string): SinkSetParse {
  return { ok: false, reason };
}
