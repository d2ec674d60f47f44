/**
 * Capture down-leveling at a fan-out hop (AEP-0001 §8.2, AEP-0002 §5.1, AEP-0003 §6.4).
 *
 * The relay is a mechanical hop: it only ever removes content, never adds any, and it
 * cannot mint the `redacted` provenance claim. Fan-out calls this once per event per
 * subscriber, so the common case (ceiling at or above the event's level) costs two rank
 * lookups and no allocation.
 */
import { isJsonObject } from './event.ts';
import type { AepEvent, JsonObject, JsonValue } from './event.ts';
import { captureRank, DEFAULT_CAPTURE, isCaptureLevel } from './levels.ts';
import type { CaptureLevel } from './levels.ts';
import { payloadField } from './payload-field.ts';
import type { PayloadField, PayloadProperties } from './payload-field.ts';
import { payloadSchemaFor } from './payload-schemas.ts';

/**
 * The level an event actually claims. An absent `capture` means `metadata` (AEP-0001 §5.1 #16);
 * an unrecognised value is treated as `full`, so it can only ever be pruned, never trusted.
 */
export function effectiveCapture(event: AepEvent): CaptureLevel {
  const declared = event.capture;
  if (declared === undefined) return DEFAULT_CAPTURE;
  return isCaptureLevel(declared) ? declared : 'full';
}

/** True when delivering `event` under `ceiling` requires rewriting it. */
export function needsDownlevel(event: AepEvent, ceiling: CaptureLevel): boolean {
  return captureRank(ceiling) < captureRank(effectiveCapture(event));
}

/**
 * The level a mechanical hop rewrites to. A `redacted` ceiling on a `full` event lands on
 * `metadata`: dropping fields cannot vouch that the kept free text passed the AEP-0003 §9.4
 * pipeline (AEP-0001 §8.2(e), AEP-0002 §5.1 rule 3).
 */
export function downlevelTarget(source: CaptureLevel, ceiling: CaptureLevel): CaptureLevel {
  if (captureRank(ceiling) >= captureRank(source)) return source;
  if (ceiling === 'redacted' && source === 'full') return 'metadata';
  return ceiling;
}

/**
 * `event` as a subscriber with capture `ceiling` may see it. Returns the input itself when no
 * rewrite is needed (treat events as immutable values); otherwise a new event whose `data` is
 * pruned to the target level and whose `capture` names it. Never mutates the input and never
 * raises the level. Every other envelope attribute, extensions included, is kept as is.
 */
export function downlevel(event: AepEvent, ceiling: CaptureLevel): AepEvent {
  const source = effectiveCapture(event);
  if (captureRank(ceiling) >= captureRank(source)) return event;
  const target = downlevelTarget(source, ceiling);

  const { data, ...envelope } = event;
  const rewritten: AepEvent = { ...envelope, capture: target };
  if (data === undefined || target === 'none') return rewritten;

  const schema = payloadSchemaFor(event.type);
  // Without a table entry nothing says which members are free text, so the whole payload
  // goes: dropping more than required is always legal (AEP-0001 §8.2(b)).
  if (schema === undefined || !isJsonObject(data)) return rewritten;

  rewritten.data = pruneMembers(schema.properties, data, target, event);
  return rewritten;
}

/** What a `[metadata*]` degradation may read: the envelope and the object holding the field. */
interface DegradationContext {
  readonly event: AepEvent;
  readonly siblings: JsonObject;
}

function pruneMembers(properties: PayloadProperties, value: JsonObject, target: CaptureLevel, event: AepEvent): JsonObject {
  const kept: Array<[string, JsonValue]> = [];
  for (const [name, member] of Object.entries(value)) {
    const field = payloadField(properties, name);
    // Members the schema does not name default to metadata (AEP-0002 §5.1 rule 4).
    if (field === undefined) {
      kept.push([name, member]);
      continue;
    }
    const pruned = pruneValue(field, member, target, { event, siblings: value });
    if (pruned !== undefined) kept.push([name, pruned]);
  }
  // fromEntries defines own properties, so a member named `__proto__` stays plain data.
  return Object.fromEntries(kept);
}

/** The value as it may appear at `target`, or undefined when it must be dropped. */
function pruneValue(
  field: PayloadField,
  value: JsonValue,
  target: CaptureLevel,
  context: DegradationContext,
): JsonValue | undefined {
  if (captureRank(field.capture) > captureRank(target)) return undefined;
  if (field.metadataException !== undefined && captureRank(target) < captureRank('redacted')) {
    return degrade(field.metadataException, value, context);
  }
  if (field.properties !== undefined) {
    // A value of the wrong shape cannot be pruned member by member, so it is dropped whole.
    return isJsonObject(value) ? pruneMembers(field.properties, value, target, context.event) : undefined;
  }
  if (field.items !== undefined) {
    if (!Array.isArray(value)) return undefined;
    const items = field.items;
    const kept: JsonValue[] = [];
    for (const item of value) {
      const pruned = pruneValue(items, item, target, context);
      if (pruned !== undefined) kept.push(pruned);
    }
    return kept;
  }
  return value;
}

/**
 * Structural stand-ins for the `[metadata*]` exception fields below `redacted` (AEP-0002 §5.3,
 * AEP-0003 §9.2). The hop has no source text it may trust, so each stand-in is built only from
 * members that are themselves metadata.
 */
function degrade(
  degradation: NonNullable<PayloadField['metadataException']>,
  value: JsonValue,
  context: DegradationContext,
): JsonValue | undefined {
  switch (degradation) {
    case 'synthesized-prompt': {
      const kind = context.siblings['kind'];
      if (typeof kind !== 'string') return undefined;
      const subject = context.event.subject;
      const prompt = `${context.event.agent} requests ${kind}`;
      return subject === undefined || subject === '' ? prompt : `${prompt}: ${subject}`;
    }
    case 'label-from-id': {
      const id = context.siblings['id'];
      return typeof id === 'string' ? id : undefined;
    }
    case 'structural-values': {
      // Without the field_spec list a string may be an `other` free-text answer, so only
      // numbers and booleans (never prose) survive; closed-select ids are lost, which is legal.
      if (!isJsonObject(value)) return undefined;
      return Object.fromEntries(
        Object.entries(value).filter(([, entry]) => typeof entry === 'number' || typeof entry === 'boolean'),
      );
    }
  }
}
