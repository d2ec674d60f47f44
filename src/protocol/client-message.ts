/**
 * Classifies one inbound WebSocket text frame (AEP-0003 §2) without throwing: a `type` with
 * a dot is an Event, returned unvalidated; a `hello` is parsed structurally (AEP-0003 §4).
 * Event validation and connection state (hello-first, roles) live with the callers.
 */
import type { JsonObject, JsonValue } from './event.ts';
import { isJsonObject } from './event.ts';
import { INVALID_FRAME, INVALID_HELLO, ROLES } from './frames.ts';
import type { Role } from './frames.ts';

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
  | { kind: 'invalid-frame'; code: 'invalid-filter' | 'invalid-frame' | 'invalid-hello'; id?: string; detail: string };

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
