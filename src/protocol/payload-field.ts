/**
 * The shape of one entry in the payload table (`payload-schemas.ts`): what a `data` member
 * may hold and the lowest capture level at which it may be present (AEP-0002 §5.1–§5.2).
 */
import type { CaptureLevel } from './levels.ts';

/** A JSON value kind as payload schemas name it; `integer` is the whole-number subset of `number`. */
export type PayloadValueKind = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';

/** The minimum capture level at which a payload member may be present (AEP-0002 §5.1). */
export type FieldCaptureLevel = Exclude<CaptureLevel, 'none'>;

/**
 * How a `[metadata*]` exception field degrades when a hop lands below `redacted`
 * (AEP-0002 §5.3, AEP-0003 §9.2). A hop has no source context, so each degradation uses
 * only structure the event already carries at metadata.
 */
export type MetadataExceptionDegradation =
  /** `attention.requested.prompt`: rebuilt as `"{agent} requests {kind}: {subject}"`. */
  | 'synthesized-prompt'
  /** An option / field_spec / choice `label`: replaced by the sibling `id`. */
  | 'label-from-id'
  /** `answer.values`: only number and boolean entries survive (no field_spec at the hop). */
  | 'structural-values';

/** The §5.2 common payload object a member is an instance of, when it is one. */
export type CommonPayloadObject =
  | 'tool_ref'
  | 'error_info'
  | 'cost'
  | 'document'
  | 'citation'
  | 'guardrail'
  | 'field_spec';

/** "When member `when` equals `equals`, the members in `require` must be present." */
export interface ConditionalRequirement {
  readonly when: string;
  readonly equals: string;
  readonly require: readonly string[];
}

/** Members of a payload object, keyed by member name. Look up with `payloadField()`. */
export type PayloadProperties = Readonly<Record<string, PayloadField>>;

/** One payload member, or the item of an array member. */
export interface PayloadField {
  /** Unannotated members default to `metadata` (AEP-0002 §5.1 rule 4). */
  readonly capture: FieldCaptureLevel;
  /** Accepted value kinds; absent means any kind (e.g. an enum-only member). */
  readonly kinds?: readonly PayloadValueKind[];
  /** Required within its parent object (never set on array items). */
  readonly required?: boolean;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: 'date-time';
  /** Known members when the value is an object; unknown members are allowed (schemas are open). */
  readonly properties?: PayloadProperties;
  /** Requirements that hold only when a sibling member has a given value. */
  readonly requiredWhen?: readonly ConditionalRequirement[];
  /** The spec of every element when the value is an array. */
  readonly items?: PayloadField;
  /** Set on the `[metadata*]` exception fields only. */
  readonly metadataException?: MetadataExceptionDegradation;
  /** Set on the root node of a §5.2 common object. */
  readonly commonObject?: CommonPayloadObject;
}

/** The payload table entry of one registered type. */
export interface PayloadSchema {
  readonly type: string;
  readonly properties: PayloadProperties;
}

/** A member's spec by name, ignoring inherited keys so hostile names like `__proto__` find nothing. */
export function payloadField(properties: PayloadProperties, name: string): PayloadField | undefined {
  return Object.hasOwn(properties, name) ? properties[name] : undefined;
}
