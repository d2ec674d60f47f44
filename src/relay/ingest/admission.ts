/**
 * Admission of one event's text on any binding (HTTP POST line, WebSocket frame): size,
 * JSON, envelope (AEP-0001 §5), identifiers the store can key on, and the token's agent
 * binding (`agent-binding.ts`). Pure: it decides, the caller
 * stores. AEP-0003 §3.2 rejects on envelope validation; payloads are not inspected here
 * because relays route on the envelope alone (AEP-0001 §5).
 */
import type { Principal } from '../../auth/principal.ts';
import { validateEnvelope } from '../../protocol/envelope.ts';
import { emitIdentityRefusal } from '../domain/agent-binding.ts';
import type { AdmittedEvent } from '../domain/stored-event.ts';

export type AdmissionRefusal =
  | { code: 'invalid-event'; detail: string }
  | { code: 'event-too-large'; detail: string }
  | { code: 'unauthorized'; detail: string };

export type Admission = { ok: true; admitted: AdmittedEvent } | { ok: false; refusal: AdmissionRefusal };

export interface AdmissionLimits {
  maxEventBytes: number;
}

export function admitEventText(raw: string, principal: Principal, limits: AdmissionLimits): Admission {
  const size = Buffer.byteLength(raw, 'utf8');
  if (size > limits.maxEventBytes) {
    return { ok: false, refusal: { code: 'event-too-large', detail: `event is ${size} bytes; the limit is ${limits.maxEventBytes}` } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, refusal: { code: 'invalid-event', detail: 'not valid JSON (RFC 8259)' } };
  }
  const validation = validateEnvelope(parsed);
  if (!validation.ok) {
    const first = validation.violations[0];
    const detail = validation.violations
      .slice(0, 5)
      .map((violation) => `${violation.rule}${violation.path === undefined ? '' : ` at ${violation.path}`}: ${violation.message}`)
      .join('; ');
    return { ok: false, refusal: { code: 'invalid-event', detail: detail === '' ? (first?.message ?? 'invalid envelope') : detail } };
  }
  const event = validation.event;
  const badIdentifier = illFormedIdentifier({ id: event.id, session: event.session, agent: event.agent, source: event.source }) ?? identifierTooLong({ id: event.id, session: event.session, agent: event.agent });
  if (badIdentifier !== undefined) return { ok: false, refusal: { code: 'invalid-event', detail: badIdentifier } };
  const identityRefusal = emitIdentityRefusal(principal, event);
  if (identityRefusal !== undefined) return { ok: false, refusal: { code: 'unauthorized', detail: identityRefusal } };
  return { ok: true, admitted: { event, raw } };
}

/**
 * Longest `id`, `session` and `agent` the relay accepts, in UTF-8 bytes. They are producer-chosen
 * strings with no length bound in AEP (AEP-0001 §12), and the relay keys DynamoDB items on them
 * (partition keys hold at most 2048 bytes, sort keys 1024): past this, an event could never be
 * stored, so it is refused up front instead of failing in the store as if it were transient.
 * Subscriptions naming longer sessions, or with a longer `id`, are refused the same way.
 */
export const MAX_IDENTIFIER_BYTES = 512;

/**
 * Why one of these identifiers is ill-formed Unicode, or undefined when none is: a lone UTF-16
 * surrogate such as `\ud800` may be escaped in JSON text but has no UTF-8 form, and the relay
 * keys items on these strings (the source through a digest of its UTF-8 bytes); DynamoDB
 * refuses or rewrites such keys, and two different sources would share one digest.
 */
export function illFormedIdentifier(identifiers: Readonly<Record<string, string | readonly string[] | undefined>>): string | undefined {
  for (const [name, value] of Object.entries(identifiers)) {
    for (const text of typeof value === 'string' ? [value] : (value ?? [])) {
      if (LONE_SURROGATE.test(text)) return `${name} is not well-formed Unicode (it holds a lone UTF-16 surrogate); identifiers must be valid UTF-8 text (RFC 8259 §8.1)`;
    }
  }
  return undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why one of these identifiers is over {@link MAX_IDENTIFIER_BYTES}, or undefined when none is. */
export function identifierTooLong(identifiers: Readonly<Record<string, string | readonly string[] | undefined>>): string | undefined {
  for (const [name, value] of Object.entries(identifiers)) {
    for (const text of typeof value === 'string' ? [value] : (value ?? [])) {
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > MAX_IDENTIFIER_BYTES) return `${name} is ${bytes} bytes; this relay accepts identifiers (id, session, agent, a type pattern's first segment) of at most ${MAX_IDENTIFIER_BYTES} bytes`;
    }
  }
  return undefined;
}

/**
 * The most places one subscription is indexed under (its pinned sessions, or the first segments
 * of the types it names): each is a write when it is recorded, so one frame may not cost more.
 */
export const MAX_SUBSCRIPTION_INDEX_ENTRIES = 32;

/** Why a subscription would be indexed under too many places, or undefined. */
export function tooManyIndexEntries(entries: { sessions?: readonly string[]; typeSegments?: readonly string[] }): string | undefined {
  const count = entries.sessions?.length ?? entries.typeSegments?.length ?? 0;
  return count > MAX_SUBSCRIPTION_INDEX_ENTRIES ? `a filter may name at most ${MAX_SUBSCRIPTION_INDEX_ENTRIES} sessions or type categories (it names ${count}); subscribe more than once instead` : undefined;
}
