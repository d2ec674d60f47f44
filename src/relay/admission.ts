/**
 * Admission of one event's text on any binding (HTTP POST line, WebSocket frame): size,
 * JSON, envelope (AEP-0001 §5), and the token's agent binding. Pure: it decides, the caller
 * stores. AEP-0003 §3.2 rejects on envelope validation; payloads are not inspected here
 * because relays route on the envelope alone (AEP-0001 §5).
 */
import type { Principal } from '../auth/principal.ts';
import { validateEnvelope } from '../protocol/envelope.ts';
import type { AdmittedEvent } from '../store/event-log.ts';

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
  if (principal.agents !== undefined && !principal.agents.includes(event.agent)) {
    return { ok: false, refusal: { code: 'unauthorized', detail: `this token may not emit as agent ${JSON.stringify(event.agent)}` } };
  }
  return { ok: true, admitted: { event, raw } };
}
