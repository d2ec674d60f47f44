/**
 * WebSocket frames (AEP-0003 §2): connection-scoped messages whose `type` has no dot.
 * Parsing classifies one inbound text frame without throwing; builders make outbound frames.
 * Event validation and connection state (hello-first, roles) live with the callers.
 */
import type { Filter, EventMatcher } from './attr-match.ts';
import { compileFilter, validateFilter } from './attr-match.ts';
import type { JsonObject, JsonValue } from './event.ts';
import { isJsonObject } from './event.ts';
import type { CaptureLevel } from './levels.ts';
import { isCaptureLevel } from './levels.ts';
import type { Position } from './positions.ts';
import { parseFrom } from './positions.ts';

/** Every frame type of AEP 0.1 (AEP-0003 §2). */
export const FRAME_TYPES = [
  'hello', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed', 'roster',
  'error', 'replay-exhausted', 'closing', 'ping', 'pong',
] as const;
export type FrameType = (typeof FRAME_TYPES)[number];

/** Connection roles declared in `hello` (AEP-0003 §4 rule 2). */
export const ROLES = ['emitter', 'consumer', 'both'] as const;
export type Role = (typeof ROLES)[number];

/** The closed refusal set for `subscribe` (AEP-0003 §6.5). */
export const SUBSCRIBE_ERROR_CODES = ['invalid-filter', 'unknown-dialect', 'unauthorized', 'limit-exceeded'] as const;
export type SubscribeErrorCode = (typeof SUBSCRIBE_ERROR_CODES)[number];

/** Code for a first frame other than `hello` (AEP-0003 §3.5 rule 1). */
export const HELLO_REQUIRED = 'hello-required';
/** Code for a `hello` whose versions miss ours; the frame lists `versions` (AEP-0003 §4 rule 1). */
export const VERSION_UNSUPPORTED = 'version-unsupported';
/**
 * Code for any malformed `hello`, including an emitter without `identity.agent` (§4 rule 3).
 * Our choice: outside the closed subscribe set, `error` codes are open strings.
 */
export const INVALID_HELLO = 'invalid-hello';
/** Code for a known frame with bad members where the spec names none (unsubscribe/roster without `id`). */
export const INVALID_FRAME = 'invalid-frame';

/** The `identity` block of a `hello` (AEP-0003 §4 rule 3), with its known members checked. */
export interface HelloIdentity {
  agent?: string;
  instance?: string;
  /** The JWS identity document (AEP-0003 §8.3), kept as sent; verifying it is policy. */
  card?: JsonValue;
}

/** A peer's parsed `hello` (AEP-0003 §4). */
export interface HelloFrame {
  type: 'hello';
  /** Offered versions in preference order, newest first. */
  versions: string[];
  role: Role;
  identity: HelloIdentity;
  /** The `identity` object exactly as received (recorded verbatim; `{}` when absent). */
  rawIdentity: JsonObject;
  /** Exactly the object received: unknown keys are kept and never validated (§4 rule 4). */
  capabilities: JsonObject;
}

/** A `subscribe` frame's members before validation; `parseSubscribe` checks them. */
export interface SubscribeRequest {
  id: string;
  filter?: JsonValue;
  from?: JsonValue;
  capture?: JsonValue;
}

/** One inbound WS text frame, classified. Callers MUST ignore `unknown-frame` (§2). */
export type ClientMessage =
  | { kind: 'malformed'; detail: string }
  | { kind: 'event'; value: JsonObject }
  | { kind: 'hello'; hello: HelloFrame }
  | { kind: 'subscribe'; subscribe: SubscribeRequest }
  | { kind: 'unsubscribe'; id: string }
  | { kind: 'roster'; id: string }
  | { kind: 'ping'; t?: JsonValue }
  | { kind: 'pong' }
  | { kind: 'closing'; reason?: string }
  | { kind: 'unknown-frame'; type: string }
  | { kind: 'invalid-frame'; code: string; id?: string; detail: string };

/**
 * Classifies one inbound text frame. Never throws; the caller bounds `text.length`.
 * A `type` containing a dot is an Event (AEP-0003 §2) and is returned unvalidated.
 */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'malformed', detail: 'the frame is not valid JSON' };
  }
  if (!isJsonObject(value)) return { kind: 'malformed', detail: 'the frame must be a JSON object' };
  const type = value['type'];
  if (typeof type !== 'string') return { kind: 'malformed', detail: 'the frame has no string "type"' };
  if (type.includes('.')) return { kind: 'event', value };

  switch (type) {
    case 'hello':
      return parseHello(value);
    case 'subscribe': {
      const id = value['id'];
      if (typeof id !== 'string') {
        return { kind: 'invalid-frame', code: 'invalid-filter', detail: 'subscribe needs a string "id"' };
      }
      const subscribe: SubscribeRequest = { id };
      for (const member of ['filter', 'from', 'capture'] as const) {
        const memberValue = value[member];
        if (Object.hasOwn(value, member) && memberValue !== undefined) subscribe[member] = memberValue;
      }
      return { kind: 'subscribe', subscribe };
    }
    case 'unsubscribe':
    case 'roster': {
      const id = value['id'];
      if (typeof id !== 'string') {
        return { kind: 'invalid-frame', code: INVALID_FRAME, detail: `${type} needs a string "id"` };
      }
      return { kind: type, id };
    }
    case 'ping':
      return Object.hasOwn(value, 't') && value['t'] !== undefined ? { kind: 'ping', t: value['t'] } : { kind: 'ping' };
    case 'pong':
      return { kind: 'pong' };
    case 'closing': {
      const reason = value['reason'];
      return typeof reason === 'string' ? { kind: 'closing', reason } : { kind: 'closing' };
    }
    default:
      // Unknown types, and the endpoint-only frames (subscribed, unsubscribed, error,
      // replay-exhausted) that carry nothing to act on inbound: all ignored (§2).
      return { kind: 'unknown-frame', type };
  }
}

function invalidHello(detail: string): ClientMessage {
  return { kind: 'invalid-frame', code: INVALID_HELLO, detail };
}

function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Checks the structure of a `hello` (AEP-0003 §4); never looks inside `capabilities`. */
function parseHello(value: JsonObject): ClientMessage {
  const versions = value['versions'];
  if (!Array.isArray(versions) || !versions.every((version) => typeof version === 'string')) {
    return invalidHello('hello needs "versions": an array of version strings');
  }
  const role = value['role'];
  if (!isRole(role)) return invalidHello('hello "role" must be emitter, consumer or both');

  const rawIdentity = Object.hasOwn(value, 'identity') ? value['identity'] : undefined;
  if (rawIdentity !== undefined && !isJsonObject(rawIdentity)) return invalidHello('hello "identity" must be an object');
  const identity: HelloIdentity = {};
  if (rawIdentity !== undefined) {
    const { agent, instance } = rawIdentity;
    if (agent !== undefined) {
      if (typeof agent !== 'string' || agent === '') return invalidHello('hello "identity.agent" must be a non-empty string');
      identity.agent = agent;
    }
    if (instance !== undefined) {
      if (typeof instance !== 'string') return invalidHello('hello "identity.instance" must be a string');
      identity.instance = instance;
    }
    if (Object.hasOwn(rawIdentity, 'card') && rawIdentity['card'] !== undefined) identity.card = rawIdentity['card'];
  }
  // §4 rule 3: an emitting connection names the agent whose events it will send.
  if (role !== 'consumer' && identity.agent === undefined) {
    return invalidHello(`hello with role "${role}" needs "identity.agent"`);
  }

  const rawCapabilities = Object.hasOwn(value, 'capabilities') ? value['capabilities'] : undefined;
  if (rawCapabilities !== undefined && !isJsonObject(rawCapabilities)) {
    return invalidHello('hello "capabilities" must be an object');
  }
  const capabilities: JsonObject = rawCapabilities ?? {};
  return { kind: 'hello', hello: { type: 'hello', versions: versions as string[], role, identity, rawIdentity: rawIdentity ?? {}, capabilities } };
}

/** The first offered version this endpoint supports: offer order is preference (AEP-0003 §4 rule 1). */
export function selectVersion(offered: readonly string[], supported: readonly string[]): string | undefined {
  return offered.find((version) => supported.includes(version));
}

/** Endpoint limits and features that decide a `subscribe`. */
export interface SubscribeLimits {
  /** Most `from` resume positions one subscription may carry. */
  maxPositions: number;
  /** Whether `from: "all"` is implemented (AEP-0003 §5); refused as `invalid-filter` when not. Default true. */
  replayAll?: boolean;
}

/** A subscription ready for fan-out. */
export interface Subscription {
  id: string;
  filter: Filter;
  /** The filter compiled once at subscribe time. */
  matches: EventMatcher;
  /** Down-level ceiling (AEP-0003 §6.4); absent means "as stored". */
  capture?: CaptureLevel;
  /** Replay request (AEP-0003 §5); absent means live only. */
  from?: 'all' | Position[];
}

/** A refused `subscribe`: the frame to send back, with a code from the closed set. */
export interface SubscribeRefusal {
  type: 'error';
  id?: string;
  code: SubscribeErrorCode;
  detail: string;
}

export type SubscribeParse = ({ ok: true } & Subscription) | { ok: false; error: SubscribeRefusal };

function refuse(code: SubscribeErrorCode, detail: string, id?: string): SubscribeParse {
  return { ok: false, error: id === undefined ? { type: 'error', code, detail } : { type: 'error', id, code, detail } };
}

/**
 * Validates a `subscribe` (AEP-0003 §6.5): the whole request is accepted or refused, never
 * partially. An absent `filter` means `{}` (the spec's match-all spelling); an explicit
 * `null` filter, an invalid `from`, or an unknown capture level is `invalid-filter`.
 * Accepts the `subscribe` member of a parsed message or a raw frame object.
 */
export function parseSubscribe(raw: unknown, limits: SubscribeLimits): SubscribeParse {
  if (!isJsonObject(raw)) return refuse('invalid-filter', 'subscribe must be a JSON object');
  const frame: JsonObject = raw;
  const id = frame['id'];
  if (typeof id !== 'string') return refuse('invalid-filter', 'subscribe needs a string "id"');

  const rawFilter = Object.hasOwn(frame, 'filter') ? frame['filter'] : undefined;
  const validated = validateFilter(rawFilter === undefined ? {} : rawFilter);
  if (!validated.ok) return refuse('invalid-filter', validated.reason, id);

  const subscription: Subscription = { id, filter: validated.filter, matches: compileFilter(validated.filter) };

  const capture = Object.hasOwn(frame, 'capture') ? frame['capture'] : undefined;
  if (capture !== undefined) {
    if (!isCaptureLevel(capture)) {
      return refuse('invalid-filter', 'capture ceiling must be one of none, metadata, redacted, full', id);
    }
    subscription.capture = capture;
  }

  const from = Object.hasOwn(frame, 'from') ? frame['from'] : undefined;
  if (from !== undefined) {
    const parsed = parseFrom(from, { maxPositions: limits.maxPositions });
    if (!parsed.ok) return refuse(parsed.code, parsed.detail, id);
    if (parsed.from === 'all' && limits.replayAll === false) {
      return refuse('invalid-filter', 'from "all" (replay-all) is not implemented by this endpoint', id);
    }
    subscription.from = parsed.from;
  }
  return { ok: true, ...subscription };
}

// ---- Outbound frames (plain objects; the caller serializes) ----

/** The endpoint's `hello`: exactly one selected version (AEP-0003 §4 rule 1). */
export interface HelloReply {
  type: 'hello';
  versions: [string];
  role: Role;
  identity?: JsonObject;
  capabilities: JsonObject;
}

/** Builds the endpoint's `hello` reply; a relay both delivers and receives events, hence `both`. */
export function helloReply(version: string, capabilities: JsonObject, identity?: JsonObject): HelloReply {
  const reply: HelloReply = { type: 'hello', versions: [version], role: 'both', capabilities };
  if (identity !== undefined) reply.identity = identity;
  return reply;
}

/** The connection-scoped `error` frame (AEP-0003 §3.5, §4, §6.5; AEP-0004 §4 uses `cause`). */
export interface ErrorFrame {
  type: 'error';
  code: string;
  id?: string;
  cause?: string;
  detail?: string;
  versions?: string[];
}

/** Builds an `error` frame, omitting absent members rather than sending `null`. */
export function errorFrame(fields: { code: string; id?: string; cause?: string; detail?: string; versions?: readonly string[] }): ErrorFrame {
  const frame: ErrorFrame = { type: 'error', code: fields.code };
  if (fields.id !== undefined) frame.id = fields.id;
  if (fields.cause !== undefined) frame.cause = fields.cause;
  if (fields.detail !== undefined) frame.detail = fields.detail;
  if (fields.versions !== undefined) frame.versions = [...fields.versions];
  return frame;
}

/** Acknowledges a subscription (AEP-0003 §6.5). */
export function subscribed(id: string): { type: 'subscribed'; id: string } {
  return { type: 'subscribed', id };
}

/** Acknowledges an `unsubscribe` (AEP-0003 §6.5). */
export function unsubscribed(id: string): { type: 'unsubscribed'; id: string } {
  return { type: 'unsubscribed', id };
}

export interface ReplayExhaustedFrame {
  type: 'replay-exhausted';
  sub: string;
  session: string;
  earliest: { epoch: number; seq: number };
}

/** Tells a subscriber its resume point predates the buffer (AEP-0003 §5). */
export function replayExhausted(sub: string, session: string, earliest: { epoch: number; seq: number }): ReplayExhaustedFrame {
  return { type: 'replay-exhausted', sub, session, earliest: { epoch: earliest.epoch, seq: earliest.seq } };
}

/** A last-delivered position per subscription, carried by `closing` (AEP-0003 §3.5 rule 4). */
export interface DeliveredPosition {
  sub: string;
  session: string;
  epoch: number;
  seq: number;
}

export interface ClosingFrame {
  type: 'closing';
  reason: string;
  delivered: DeliveredPosition[];
}

/** Announces an orderly close with the positions the consumer can resume from. */
export function closing(reason: string, delivered: readonly DeliveredPosition[]): ClosingFrame {
  return {
    type: 'closing',
    reason,
    delivered: delivered.map(({ sub, session, epoch, seq }) => ({ sub, session, epoch, seq })),
  };
}

/** Answers a `ping`, echoing `t` when the ping carried one (AEP-0003 §3.5 rule 5). */
export function pong(t?: JsonValue): { type: 'pong'; t?: JsonValue } {
  return t === undefined ? { type: 'pong' } : { type: 'pong', t };
}

/**
 * One live claim in a roster (AEP-0003 §4.1 rule 4). Members other than `session` are copied
 * only when the claimant declared them: the endpoint never synthesizes one.
 */
export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  control?: JsonValue;
  emits?: JsonValue;
}

export interface RosterReply {
  type: 'roster';
  id: string;
  entries: RosterEntry[];
}

/** Answers a `roster` request with the full snapshot, one entry per claim (AEP-0003 §4.1). */
export function rosterReply(id: string, entries: readonly RosterEntry[]): RosterReply {
  return {
    type: 'roster',
    id,
    entries: entries.map((entry) => {
      const out: RosterEntry = { session: entry.session };
      if (entry.agent !== undefined) out.agent = entry.agent;
      if (entry.instance !== undefined) out.instance = entry.instance;
      if (entry.control !== undefined) out.control = entry.control;
      if (entry.emits !== undefined) out.emits = entry.emits;
      return out;
    }),
  };
}
