/**
 * WebSocket frames (AEP-0003 §2): connection-scoped messages whose `type` has no dot. This
 * file holds their vocabulary (types, roles, error codes) and builds the frames the relay
 * sends; `client-message.ts` classifies inbound frames and `subscribe-request.ts` decides a
 * `subscribe`.
 */
import type { JsonObject, JsonValue } from './event.ts';

/** Every frame type of AEP 0.1 (AEP-0003 §2). */
export const FRAME_TYPES = [
  'hello', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed', 'roster',
  'error', 'replay-exhausted', 'closing', 'ping', 'pong',
] as const;

/** Connection roles declared in `hello` (AEP-0003 §4 rule 2). */
export const ROLES = ['emitter', 'consumer', 'both'] as const;
export type Role = (typeof ROLES)[number];

/** The closed refusal set for `subscribe` (AEP-0003 §6.5). */
export const SUBSCRIBE_ERROR_CODES = ['invalid-filter', 'unknown-dialect', 'unauthorized', 'limit-exceeded'] as const;
export type SubscribeErrorCode = (typeof SUBSCRIBE_ERROR_CODES)[number];

/**
 * Code for any malformed `hello`, including an emitter without `identity.agent` (§4 rule 3).
 * Our choice: outside the closed subscribe set, `error` codes are open strings.
 */
export const INVALID_HELLO = 'invalid-hello';
/** Code for a known frame with bad members where the spec names none (unsubscribe/roster without `id`). */
export const INVALID_FRAME = 'invalid-frame';

// Outbound frames: plain objects; the caller serializes.

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
  /**
   * Additive (AEP-0003 §4 rule 4), and not a declaration: the relay's own finding that the
   * claimant's hello carried a valid identity card (§8.3), by this operator, until then.
   */
  verified?: { operator: string; valid_until: string };
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
      if (entry.verified !== undefined) out.verified = entry.verified;
      return out;
    }),
  };
}
