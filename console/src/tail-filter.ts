/**
 * The live tail's filter form, turned into an `attr-match` filter (AEP-0003 §6): each filled
 * field is one member, the members are a conjunction, a list is an any-of inclusion. The
 * result is checked with the relay's own validator (`src/protocol/attr-match.ts`) so the
 * form reports what the relay would refuse before a stream is opened.
 */
import { validateFilter } from '../../src/protocol/attr-match.ts';
import type { Filter } from '../../src/protocol/attr-match.ts';
import { isSeverity } from '../../src/protocol/levels.ts';

export interface TailFilterForm {
  /** Comma- or space-separated session ids. */
  sessions: string;
  agents: string;
  /** Exact types or `prefix.*` patterns, e.g. `attention.*, tool.denied`. */
  types: string;
  /** Lowest severity to show; empty for all. */
  minSeverity: string;
}

export const EMPTY_TAIL_FILTER: TailFilterForm = { sessions: '', agents: '', types: '', minSeverity: '' };

export type TailFilterResult = { ok: true; filter: Filter } | { ok: false; field: keyof TailFilterForm; reason: string };

export function listOf(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((part) => part.trim()).filter((part) => part !== ''))];
}

export function filterOfForm(form: TailFilterForm): TailFilterResult {
  const members: Record<string, unknown> = {};
  const fields: [keyof TailFilterForm, string][] = [
    ['sessions', 'session'],
    ['agents', 'agent'],
    ['types', 'type'],
  ];
  for (const [field, attribute] of fields) {
    const values = listOf(form[field]);
    if (values.length === 1) members[attribute] = values[0];
    if (values.length > 1) members[attribute] = values;
    if (values.length === 0) continue;
    // Checked one member at a time, so the error lands on the field that caused it.
    const check = validateFilter({ [attribute]: members[attribute] });
    if (!check.ok) return { ok: false, field, reason: check.reason };
  }
  if (form.minSeverity !== '') {
    if (!isSeverity(form.minSeverity)) return { ok: false, field: 'minSeverity', reason: `unknown severity ${form.minSeverity}` };
    members.severity = { gte: form.minSeverity };
  }
  const whole = validateFilter(members);
  if (!whole.ok) return { ok: false, field: 'types', reason: whole.reason };
  return { ok: true, filter: whole.filter };
}
