/**
 * Type-dependent capture gating of form answers (`answer.values`, AEP-0006; AEP-0002 §5.3).
 *
 * Unlike a mechanical hop (see `downlevel.ts`), a party holding the request's `fields` knows
 * which answers are prose: a string field's value and an `other` free-text answer on a select
 * are user-authored text (`redacted` minimum), while numbers, booleans and closed choice ids
 * are structural and survive at `metadata`.
 */
import { isJsonObject } from '../event.ts';
import type { JsonObject, JsonValue } from '../event.ts';
import { captureRank } from '../levels.ts';
import type { CaptureLevel } from '../levels.ts';

/** The parts of a field_spec that decide how its answer is gated. */
interface FieldGate {
  readonly type: string;
  readonly choiceIds: ReadonlySet<string>;
}

/**
 * The entries of `values` that may be present at `ceiling`, given the request's `fields`.
 * Keys without a matching field_spec are dropped: nothing vouches for them. `none` gates like
 * `metadata`; dropping `data` entirely at `none` is the envelope-level caller's job.
 */
export function gateFormValues(fields: unknown, values: unknown, ceiling: CaptureLevel): JsonObject {
  if (!isJsonObject(values)) return {};
  const gates = fieldGates(fields);
  const textAllowed = captureRank(ceiling) >= captureRank('redacted');
  const kept: Array<[string, JsonValue]> = [];
  for (const [id, value] of Object.entries(values)) {
    const gate = gates.get(id);
    if (gate === undefined) continue;
    if (textAllowed || isStructuralAnswer(gate, value)) kept.push([id, value]);
  }
  // fromEntries defines own properties, so a key named `__proto__` stays plain data.
  return Object.fromEntries(kept);
}

/** Field gates by field id; the first spec wins when a hostile request repeats an id. */
function fieldGates(fields: unknown): ReadonlyMap<string, FieldGate> {
  const gates = new Map<string, FieldGate>();
  if (!Array.isArray(fields)) return gates;
  for (const spec of fields) {
    if (!isJsonObject(spec)) continue;
    const { id, type } = spec;
    if (typeof id !== 'string' || typeof type !== 'string' || gates.has(id)) continue;
    gates.set(id, { type, choiceIds: choiceIds(spec['choices']) });
  }
  return gates;
}

function choiceIds(choices: JsonValue | undefined): ReadonlySet<string> {
  const ids = new Set<string>();
  if (!Array.isArray(choices)) return ids;
  for (const choice of choices) {
    if (isJsonObject(choice) && typeof choice['id'] === 'string') ids.add(choice['id']);
  }
  return ids;
}

/**
 * True when an answer can carry no prose: a number for a number field, a boolean for a boolean
 * field, or closed choice id(s) for a select. Anything else, including a value whose kind
 * does not match its field, is treated as text and needs `redacted`.
 */
function isStructuralAnswer(gate: FieldGate, value: JsonValue): boolean {
  switch (gate.type) {
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'select':
      if (typeof value === 'string') return gate.choiceIds.has(value);
      return Array.isArray(value) && value.every((entry) => typeof entry === 'string' && gate.choiceIds.has(entry));
    default:
      return false;
  }
}
