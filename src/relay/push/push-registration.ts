/**
 * Parses a push subscription registration (`POST /push/subscriptions`), pure and failing
 * with a reason that names the member: the browser's `PushSubscription.toJSON()` (endpoint and
 * keys) plus the relay's own choices (filter, kinds, ceiling, label).
 */
import { createHash } from 'node:crypto';
import { validateFilter } from '../../protocol/attr-match.ts';
import type { Filter } from '../../protocol/attr-match.ts';
import { isJsonObject } from '../../protocol/event.ts';
import type { JsonValue } from '../../protocol/event.ts';
import { CAPTURE_LEVELS, captureRank, isCaptureLevel } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { AddressRule } from '../domain/outbound-address.ts';
import { parseUrl } from '../bridges/sink-settings.ts';
import { ATTENTION_KINDS } from './push-subscription.ts';
import type { AttentionKind, PushOwner, PushSubscriptionRecord } from './push-subscription.ts';

/** The default ceiling: a push service is a third party (DESIGN hazard 20). */
export const DEFAULT_PUSH_CEILING: CaptureLevel = 'metadata';
const KNOWN_MEMBERS = new Set(['endpoint', 'keys', 'expirationTime', 'filter', 'kinds', 'maxCapture', 'label', 'vapidKey']);
// RFC 8291: p256dh is an uncompressed P-256 point (65 bytes), auth 16 bytes, both base64url.
const P256DH = /^[A-Za-z0-9_-]{86,88}={0,2}$/;
const AUTH = /^[A-Za-z0-9_-]{22,24}={0,2}$/;
const MAX_ENDPOINT_LENGTH = 2048;

export interface RegistrationContext {
  owner: PushOwner;
  /** The registering token's own ceiling (absent: `full`): a subscription never reads more than its token. */
  tokenCeiling?: CaptureLevel;
  /** The relay's VAPID public keys, current first: the browser must have subscribed under one of them. */
  vapidKeys: readonly string[];
  addresses: AddressRule;
  nowMs: number;
}

export type RegistrationParse = { ok: true; record: PushSubscriptionRecord } | { ok: false; reason: string };

export function parseRegistration(body: unknown, context: RegistrationContext): RegistrationParse {
  if (!isJsonObject(body)) return fail('the body is a JSON object { "endpoint", "keys": { "p256dh", "auth" }, … }');
  const unknown = Object.keys(body).find((member) => !KNOWN_MEMBERS.has(member));
  if (unknown !== undefined) return fail(`unknown member ${JSON.stringify(unknown.slice(0, 64))}`);
  if (typeof body.endpoint !== 'string' || body.endpoint.length > MAX_ENDPOINT_LENGTH) return fail(`"endpoint" is the push service URL, at most ${MAX_ENDPOINT_LENGTH} characters`);
  const endpoint = parseUrl(body.endpoint, 'endpoint', context.addresses);
  if (!endpoint.ok) return fail(endpoint.reason);
  const keys = body.keys;
  if (!isJsonObject(keys) || typeof keys.p256dh !== 'string' || !P256DH.test(keys.p256dh) || typeof keys.auth !== 'string' || !AUTH.test(keys.auth)) {
    return fail('"keys" is { "p256dh": base64url of a P-256 public key, "auth": base64url of 16 bytes }');
  }
  const vapidKey = body.vapidKey ?? context.vapidKeys[0];
  if (typeof vapidKey !== 'string' || !context.vapidKeys.includes(vapidKey)) return fail('"vapidKey" is not this relay\'s current VAPID key: subscribe again with the key GET /push/key answers');
  const filter = parseFilter(body.filter);
  if (typeof filter === 'string') return fail(filter);
  const kinds = parseKinds(body.kinds);
  if (typeof kinds === 'string') return fail(kinds);
  const ceiling = body.maxCapture ?? DEFAULT_PUSH_CEILING;
  if (!isCaptureLevel(ceiling)) return fail(`"maxCapture" is one of ${CAPTURE_LEVELS.join(', ')}`);
  if (context.tokenCeiling !== undefined && captureRank(ceiling) > captureRank(context.tokenCeiling)) {
    return fail(`"maxCapture" ${ceiling} is above this token's own ceiling (${context.tokenCeiling})`);
  }
  const label = body.label;
  if (label !== undefined && (typeof label !== 'string' || label.length > 80 || /[\u0000-\u001f]/.test(label))) return fail('"label" is a single-line string of at most 80 characters');
  return {
    ok: true,
    record: {
      id: subscriptionIdOf(endpoint.url),
      owner: context.owner,
      endpoint: endpoint.url,
      keys: { p256dh: keys.p256dh, auth: keys.auth },
      vapidKey,
      filter,
      ...(kinds === undefined ? {} : { kinds }),
      maxCapture: ceiling,
      createdAtMs: context.nowMs,
      ...(label === undefined ? {} : { label }),
    },
  };
}

/**
 * One browser, one subscription: the id is a digest of its endpoint (which is secret-ish, so never
 * the endpoint itself), in hex: a base64url id begins with `-` one time in 64, which a command
 * line (`aep-relay push delete ID`) reads as an option.
 */
export function subscriptionIdOf(endpoint: string): string {
  return createHash('sha256').update(endpoint).digest('hex').slice(0, 32);
}

/** The relay's filter language (AEP-0003 §6); `type` is the lane's own (attention requests only). */
function parseFilter(value: JsonValue | undefined): Filter | string {
  if (value === undefined) return {};
  const checked = validateFilter(value);
  if (!checked.ok) return `"filter": ${checked.reason}`;
  if ('type' in checked.filter) return '"filter": notifications are for attention requests only; leave "type" out';
  return checked.filter;
}

function parseKinds(value: JsonValue | undefined): AttentionKind[] | undefined | string {
  if (value === undefined) return undefined;
  const known: readonly string[] = ATTENTION_KINDS;
  if (!Array.isArray(value) || value.length === 0 || !value.every((kind) => typeof kind === 'string' && known.includes(kind))) {
    return `"kinds" is a non-empty array of ${ATTENTION_KINDS.join(', ')}`;
  }
  return [...new Set(value as AttentionKind[])];
}

function fail(reason: string): RegistrationParse {
  return { ok: false, reason };
}
