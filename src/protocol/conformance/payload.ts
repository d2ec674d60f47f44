/**
 * Checks a registered type's `data` against the payload table (AEP-0002 §5.2–§5.4).
 * Schemas are open: unknown members are not violations. Unregistered types (including
 * vendor `x.*` types) carry no contract the relay knows, so they never fail here.
 */
import { isJsonObject } from '../event.ts';
import type { PayloadField, PayloadProperties, PayloadValueKind } from '../payload-field.ts';
import { payloadSchemaFor } from '../payload-schemas.ts';
import { violation } from '../violation.ts';
import type { Violation } from '../violation.ts';

const PAYLOAD_RULE = 'AEP-0002 §5';
// Violations inside a common object cite the section that defines it.
const COMMON_OBJECT_RULE = 'AEP-0002 §5.2';

/** Every way `data` of `type` breaks its registered payload schema; empty when it conforms. */
export function payloadViolations(type: string, data: unknown): Violation[] {
  const schema = payloadSchemaFor(type);
  // Absent `data` is legal for every type: a `capture: none` event is envelope only (AEP-0001 §8.2).
  if (schema === undefined || data === undefined) return [];
  const found: Violation[] = [];
  if (!isJsonObject(data)) {
    found.push(violation(PAYLOAD_RULE, `data of ${type} must be an object`, 'data'));
    return found;
  }
  checkMembers(schema.properties, undefined, data, 'data', PAYLOAD_RULE, found);
  return found;
}

function checkMembers(
  properties: PayloadProperties,
  owner: PayloadField | undefined,
  value: Record<string, unknown>,
  path: string,
  rule: string,
  found: Violation[],
): void {
  for (const [name, field] of Object.entries(properties)) {
    const memberPath = childPath(path, name);
    if (!Object.hasOwn(value, name)) {
      if (field.required === true) found.push(violation(rule, `${memberPath} is required`, memberPath));
      continue;
    }
    checkValue(field, value[name], memberPath, rule, found);
  }
  for (const condition of owner?.requiredWhen ?? []) {
    if (!Object.hasOwn(value, condition.when) || value[condition.when] !== condition.equals) continue;
    for (const name of condition.require) {
      if (Object.hasOwn(value, name)) continue;
      const memberPath = childPath(path, name);
      found.push(
        violation(rule, `${memberPath} is required when ${condition.when} is "${condition.equals}"`, memberPath),
      );
    }
  }
}

function checkValue(field: PayloadField, value: unknown, path: string, inheritedRule: string, found: Violation[]): void {
  const rule = field.commonObject === undefined ? inheritedRule : COMMON_OBJECT_RULE;
  if (field.kinds !== undefined && !field.kinds.some((kind) => hasKind(value, kind))) {
    found.push(violation(rule, `${path} must be ${describeKinds(field.kinds)}`, path));
    return;
  }
  if (field.enum !== undefined && !(typeof value === 'string' && field.enum.includes(value))) {
    found.push(violation(rule, `${path} must be one of ${field.enum.join(', ')}`, path));
    return;
  }
  if (typeof value === 'number') {
    if (field.minimum !== undefined && value < field.minimum) {
      found.push(violation(rule, `${path} must be at least ${field.minimum}`, path));
    }
    if (field.maximum !== undefined && value > field.maximum) {
      found.push(violation(rule, `${path} must be at most ${field.maximum}`, path));
    }
  }
  if (field.format === 'date-time' && typeof value === 'string' && !isRfc3339DateTime(value)) {
    found.push(violation(rule, `${path} must be an RFC 3339 date-time with a timezone`, path));
  }
  if (field.properties !== undefined && isJsonObject(value)) {
    checkMembers(field.properties, field, value, path, rule, found);
  }
  if (field.items !== undefined && Array.isArray(value)) {
    const items = field.items;
    value.forEach((item: unknown, index) => checkValue(items, item, `${path}[${index}]`, rule, found));
  }
}

function hasKind(value: unknown, kind: PayloadValueKind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isJsonObject(value);
    case 'array':
      return Array.isArray(value);
  }
}

function describeKinds(kinds: readonly PayloadValueKind[]): string {
  return kinds.map((kind) => (kind === 'integer' || kind === 'object' || kind === 'array' ? `an ${kind}` : `a ${kind}`)).join(' or ');
}

// Member names such as `gen_ai.usage.input_tokens` contain dots, so they get bracket notation.
const PLAIN_MEMBER_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(parent: string, name: string): string {
  return PLAIN_MEMBER_NAME.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`;
}

// RFC 3339 §5.6 date-time; the offset is mandatory, so a bare local time fails.
const RFC3339_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

function isRfc3339DateTime(value: string): boolean {
  const match = RFC3339_DATE_TIME.exec(value);
  if (match === null) return false;
  const [, year, month, day, hour, minute, second, , , offsetHour, offsetMinute] = match.map((part) =>
    part === undefined ? undefined : Number(part),
  );
  if (year === undefined || month === undefined || day === undefined) return false;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  // Second 60 is a leap second, which RFC 3339 allows.
  if ((hour ?? 99) > 23 || (minute ?? 99) > 59 || (second ?? 99) > 60) return false;
  if (offsetHour !== undefined && (offsetHour > 23 || (offsetMinute ?? 99) > 59)) return false;
  return true;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}
