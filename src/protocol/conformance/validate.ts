/**
 * The full single-event check: envelope (AEP-0001 §5–§8) and, for registered types, the
 * payload schema (AEP-0002 §5).
 *
 * Ingest (AEP-0003 §3.2) rejects on the envelope alone (`validateEnvelope`): relays route on
 * context attributes and never need `data`, and consumers tolerate payload shapes they do
 * not know. This stricter check is for conformance tooling and emitter self-tests.
 */
import { validateEnvelope } from '../envelope.ts';
import type { ValidationResult } from '../envelope.ts';
import { payloadViolations } from './payload.ts';

/** Validates the envelope, then (only if it is valid) the payload of a registered type. */
export function validateEvent(value: unknown): ValidationResult {
  const envelope = validateEnvelope(value);
  if (!envelope.ok) return envelope;
  const violations = payloadViolations(envelope.event.type, envelope.event.data);
  return violations.length === 0 ? envelope : { ok: false, violations };
}
