/**
 * Builders that keep the payload table readable: each returns a fresh member spec. An
 * unannotated member is `metadata` (AEP-0002 §5.1 rule 4), so that is every default.
 */
import type { FieldCaptureLevel, PayloadField, PayloadProperties, PayloadValueKind } from './payload-field.ts';

export type Extra = Omit<PayloadField, 'capture' | 'kinds'>;

export function text(capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['string'], ...extra };
}

export function count(capture: FieldCaptureLevel = 'metadata'): PayloadField {
  return { capture, kinds: ['integer'], minimum: 0 };
}

export function integer(): PayloadField {
  return { capture: 'metadata', kinds: ['integer'] };
}

export function decimal(extra: Extra = {}): PayloadField {
  return { capture: 'metadata', kinds: ['number'], ...extra };
}

export function flag(): PayloadField {
  return { capture: 'metadata', kinds: ['boolean'] };
}

export function oneOf(values: readonly string[], kinds?: readonly PayloadValueKind[]): PayloadField {
  return kinds === undefined ? { capture: 'metadata', enum: values } : { capture: 'metadata', kinds, enum: values };
}

export function object(properties: PayloadProperties = {}, capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['object'], properties, ...extra };
}

/** An object member whose contents are free-form (no known members). */
export function opaqueObject(capture: FieldCaptureLevel): PayloadField {
  return { capture, kinds: ['object'] };
}

export function list(items: PayloadField, capture: FieldCaptureLevel = 'metadata', extra: Extra = {}): PayloadField {
  return { capture, kinds: ['array'], items, ...extra };
}

export function required(field: PayloadField): PayloadField {
  return { ...field, required: true };
}
