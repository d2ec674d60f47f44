/**
 * A Web Push subscription (RFC 8030 §4, the browser's `PushSubscription`) held for a principal:
 * where the push service takes messages for one browser, the keys its payloads are encrypted to
 * (RFC 8291), which attention requests it wants (a filter in the relay's own filter language,
 * AEP-0003 §6, plus the request kinds it cares for), and the capture ceiling of what a
 * notification may carry. A push service is a third party (DESIGN hazard 20): the ceiling
 * defaults to `metadata`, so a notification names the agent, the session and the kind of
 * request, never the prompt, unless the subscriber asks for more and its token allows it.
 */
import type { Filter } from '../../protocol/attr-match.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

/** The `attention.requested` kinds (AEP-0002 §5.3). */
export const ATTENTION_KINDS = ['permission', 'input', 'auth', 'review', 'form', 'other'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

/** Whose subscription it is. */
export interface PushOwner {
  /** The token that registered it (its rotation lineage, so a rotated token keeps it). */
  token: string;
  /**
   * The signed-in person, where team sign-in is configured (issue 50 fills this from the
   * principal); absent: the subscription belongs to the token alone.
   */
  person?: { subject: string; name?: string; provider: string };
}

export interface PushSubscriptionRecord {
  /** Derived from the endpoint: registering the same browser again replaces its subscription. */
  id: string;
  owner: PushOwner;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The VAPID public key the browser subscribed under (`applicationServerKey`). */
  vapidKey: string;
  /** Envelope predicates (AEP-0003 §6): `agent`, `session`, `severity: { gte }`, … */
  filter: Filter;
  /** Only requests of these kinds; absent: every kind. */
  kinds?: AttentionKind[];
  /** Nothing above this capture level goes to the push service (AEP-0001 §8.2). */
  maxCapture: CaptureLevel;
  createdAtMs: number;
  /** A label the subscriber chose ("my phone"), shown in listings. */
  label?: string;
}

/** What a listing shows: never the keys. */
export type PushSubscriptionView = Omit<PushSubscriptionRecord, 'keys'>;

export function viewOf(record: PushSubscriptionRecord): PushSubscriptionView {
  const { keys: _keys, ...view } = record;
  return view;
}

/** Letters of the push lane in the bridges' letter store are named after the subscription. */
export const PUSH_LETTER_PREFIX = 'push:';
export const pushLetterSink = (subscriptionId: string) => `${PUSH_LETTER_PREFIX}${subscriptionId}`;
