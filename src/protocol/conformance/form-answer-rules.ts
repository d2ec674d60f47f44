/**
 * The cross-event rule of form requests (AEP-0006 via AEP-0002 §5.3): an answer to a select
 * field that does not allow free text must be one of that field's choice ids. The request
 * and its answer are two events, so the stream checker remembers each request's closed
 * choices (ids only, never labels) until the answer or a terminal arrives.
 */
import { isJsonObject } from '../event.ts';
import type { JsonValue } from '../event.ts';
import type { Violation } from '../violation.ts';
import { violation } from '../violation.ts';
import { clip } from './clip.ts';

/** Closed choice sets of a form request's select fields that do not allow free text. */
export type ClosedSelects = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The select fields of a `kind: "form"` request whose answers must be choice ids: those
 * without `other: true` (AEP-0006 via AEP-0002 §5.3). Only ids are kept, never labels.
 */
export function closedSelects(data: JsonValue | undefined): ClosedSelects {
  const selects = new Map<string, ReadonlySet<string>>();
  if (!isJsonObject(data) || own(data, 'kind') !== 'form') return selects;
  const fields = own(data, 'fields');
  if (!Array.isArray(fields)) return selects;
  for (const field of fields) {
    if (!isJsonObject(field) || own(field, 'type') !== 'select' || own(field, 'other') === true) continue;
    const fieldId = own(field, 'id');
    const choices = own(field, 'choices');
    if (typeof fieldId !== 'string' || selects.has(fieldId) || !Array.isArray(choices)) continue;
    const ids = new Set<string>();
    for (const choice of choices) {
      const choiceId = isJsonObject(choice) ? own(choice, 'id') : undefined;
      if (typeof choiceId === 'string') ids.add(choiceId);
    }
    selects.set(fieldId, ids);
  }
  return selects;
}

/** Answers to closed select fields that are not one of the field's choice ids (AEP-0002 §5.3). */
export function formAnswerViolations(selects: ClosedSelects, data: JsonValue | undefined): Violation[] {
  const answer = isJsonObject(data) ? own(data, 'answer') : undefined;
  const values = isJsonObject(answer) ? own(answer, 'values') : undefined;
  if (!isJsonObject(values)) return [];
  const out: Violation[] = [];
  for (const [fieldId, choices] of selects) {
    const value = own(values, fieldId);
    // A single select answers with one id; `multi: true` with an array of ids.
    const picked = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
    for (const choice of picked) {
      if (typeof choice === 'string' && !choices.has(choice)) {
        out.push(violation('AEP-0002 §5.3', `"${clip(choice)}" is not a choice id of select field "${clip(fieldId)}", which does not allow other (free-text) answers`, `data.answer.values.${fieldId}`));
      }
    }
  }
  return out;
}

/** An own property only: `values["__proto__"]` must not reach Object.prototype. */
function own(object: { readonly [key: string]: JsonValue }, name: string): JsonValue | undefined {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}
