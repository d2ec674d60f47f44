import { describe, expect, it } from 'vitest';
import { payloadField } from '../../src/protocol/payload-field.ts';
import type { PayloadField, PayloadProperties } from '../../src/protocol/payload-field.ts';
import { PAYLOAD_SCHEMAS, payloadSchemaFor } from '../../src/protocol/payload-schemas.ts';
import { readTypeRegistry, readTypeSchemas, reportCorpus } from '../support/aep-corpus.ts';

/** The subset of a JSON Schema node the payload schemas use. */
interface SchemaNode {
  type?: string | string[];
  enum?: string[];
  minimum?: number;
  maximum?: number;
  format?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  if?: { properties?: Record<string, { const?: string }>; required?: string[] };
  then?: { required?: string[] };
  $comment?: string;
  'x-aep-capture'?: string;
}

/** One schema node paired with the table node at the same place. */
interface Pair {
  type: string;
  path: string;
  schema: SchemaNode;
  table: PayloadField;
  requiredInSchema: boolean;
}

const schemas = readTypeSchemas() as Map<string, SchemaNode>;
const registry = readTypeRegistry();

/** Walks every property and array item of both trees together, recording mismatched membership. */
function walk(type: string): { pairs: Pair[]; membershipErrors: string[] } {
  const pairs: Pair[] = [];
  const membershipErrors: string[] = [];
  const root = schemas.get(type) as SchemaNode;
  const entry = payloadSchemaFor(type);
  if (entry === undefined) return { pairs, membershipErrors: [`${type}: no table entry`] };

  const visitProperties = (path: string, schema: SchemaNode, table: PayloadProperties | undefined): void => {
    const schemaNames = Object.keys(schema.properties ?? {});
    const tableNames = Object.keys(table ?? {});
    for (const name of tableNames) {
      if (!schemaNames.includes(name)) membershipErrors.push(`${type} ${path}.${name}: in the table, not the schema`);
    }
    for (const name of schemaNames) {
      const childSchema = (schema.properties as Record<string, SchemaNode>)[name] as SchemaNode;
      const childTable = table === undefined ? undefined : payloadField(table, name);
      if (childTable === undefined) {
        membershipErrors.push(`${type} ${path}.${name}: in the schema, not the table`);
        continue;
      }
      visitNode(`${path}.${name}`, childSchema, childTable, (schema.required ?? []).includes(name));
    }
  };

  const visitNode = (path: string, schema: SchemaNode, table: PayloadField, requiredInSchema: boolean): void => {
    pairs.push({ type, path, schema, table, requiredInSchema });
    if (schema.properties !== undefined || table.properties !== undefined) {
      visitProperties(path, schema, table.properties);
    }
    if (schema.items !== undefined && table.items !== undefined) {
      visitNode(`${path}[]`, schema.items, table.items, false);
    } else if (schema.items !== undefined || table.items !== undefined) {
      membershipErrors.push(`${type} ${path}[]: items in only one of schema and table`);
    }
  };

  visitProperties('data', root, entry.properties);
  return { pairs, membershipErrors };
}

const typesWithSchemas = registry.filter((entry) => entry.schema !== null).map((entry) => entry.type);
const walks = typesWithSchemas.map((type) => ({ type, ...walk(type) }));
const allPairs = walks.flatMap((entry) => entry.pairs);
const annotatedPairs = allPairs.filter((pair) => pair.schema['x-aep-capture'] !== undefined);

function asList(kinds: string | string[] | undefined): string[] | undefined {
  return kinds === undefined ? undefined : Array.isArray(kinds) ? kinds : [kinds];
}

// The AEP-0002 §5.3 [metadata*] exception fields and the degradation each takes below redacted.
const metadataExceptions: Record<string, Record<string, string>> = {
  'attention.requested': {
    'data.prompt': 'synthesized-prompt',
    'data.options[].label': 'label-from-id',
    'data.fields[].label': 'label-from-id',
    'data.fields[].choices[].label': 'label-from-id',
  },
  'attention.answered': { 'data.answer.values': 'structural-values' },
  'control.attention.respond': { 'data.answer.values': 'structural-values' },
};

describe('payload schema table', () => {
  it('has an entry for every registered type with a schema file, and no other', () => {
    reportCorpus('registry types with a payload schema', typesWithSchemas.length);
    expect(typesWithSchemas.length).toBeGreaterThan(0);
    expect([...PAYLOAD_SCHEMAS.keys()].sort()).toEqual([...typesWithSchemas].sort());
    for (const entry of registry) {
      expect(schemas.has(entry.type), entry.type).toBe(entry.schema !== null);
    }
  });

  it('returns undefined for unregistered and vendor types', () => {
    expect(payloadSchemaFor('x.acme.session.custom_blob')).toBeUndefined();
    expect(payloadSchemaFor('message.user.submitted')).toBeUndefined();
    expect(payloadSchemaFor('__proto__')).toBeUndefined();
    expect(payloadSchemaFor('constructor')).toBeUndefined();
  });

  it('names exactly the members the schemas name, at every nesting level and in array items', () => {
    reportCorpus('payload schema nodes walked', allPairs.length);
    expect(allPairs.length).toBeGreaterThan(typesWithSchemas.length);
    expect(walks.flatMap((entry) => entry.membershipErrors)).toEqual([]);
  });

  it('holds the annotated capture level of every x-aep-capture annotation', () => {
    reportCorpus('x-aep-capture annotations', annotatedPairs.length);
    expect(annotatedPairs.length).toBeGreaterThan(100);
    const mismatches = annotatedPairs
      .filter((pair) => pair.table.capture !== pair.schema['x-aep-capture'])
      .map((pair) => `${pair.type} ${pair.path}: table ${pair.table.capture}, schema ${pair.schema['x-aep-capture']}`);
    expect(mismatches).toEqual([]);
  });

  it('reaches every annotation the schema files hold (none sit outside properties and items)', () => {
    const countAnnotations = (node: unknown): number => {
      if (Array.isArray(node)) return node.reduce((sum: number, child) => sum + countAnnotations(child), 0);
      if (typeof node !== 'object' || node === null) return 0;
      return Object.entries(node).reduce(
        (sum, [key, child]) => sum + (key === 'x-aep-capture' ? 1 : countAnnotations(child)),
        0,
      );
    };
    const inFiles = typesWithSchemas.reduce((sum, type) => sum + countAnnotations(schemas.get(type)), 0);
    expect(annotatedPairs.length).toBe(inFiles);
  });

  it('defaults unannotated nodes to metadata', () => {
    const unannotated = allPairs.filter((pair) => pair.schema['x-aep-capture'] === undefined);
    expect(unannotated.length).toBeGreaterThan(0);
    for (const pair of unannotated) expect(pair.table.capture, `${pair.type} ${pair.path}`).toBe('metadata');
  });

  it('agrees with the schemas on kinds, required, enum, bounds and format', () => {
    const mismatches: string[] = [];
    for (const { type, path, schema, table, requiredInSchema } of allPairs) {
      const where = `${type} ${path}`;
      const facts: Array<[string, unknown, unknown]> = [
        ['kinds', table.kinds, asList(schema.type)],
        ['required', table.required === true, requiredInSchema],
        ['enum', table.enum, schema.enum],
        ['minimum', table.minimum, schema.minimum],
        ['maximum', table.maximum, schema.maximum],
        ['format', table.format, schema.format],
      ];
      for (const [fact, inTable, inSchema] of facts) {
        if (JSON.stringify(inTable) !== JSON.stringify(inSchema)) {
          mismatches.push(`${where} ${fact}: table ${JSON.stringify(inTable)}, schema ${JSON.stringify(inSchema)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('holds the same required members at the payload root as the schemas', () => {
    for (const type of typesWithSchemas) {
      const schemaRequired = [...((schemas.get(type) as SchemaNode).required ?? [])].sort();
      const properties = (payloadSchemaFor(type) as { properties: PayloadProperties }).properties;
      const tableRequired = Object.entries(properties)
        .filter(([, field]) => field.required === true)
        .map(([name]) => name)
        .sort();
      expect(tableRequired, type).toEqual(schemaRequired);
    }
  });

  it('carries every if/then conditional requirement of the schemas as requiredWhen', () => {
    const conditionals = allPairs.filter((pair) => pair.schema.if !== undefined);
    reportCorpus('payload schema conditionals', conditionals.length);
    expect(conditionals.length).toBeGreaterThan(0);
    for (const { type, path, schema, table } of conditionals) {
      const [when, condition] = Object.entries(schema.if?.properties ?? {})[0] ?? [];
      expect(table.requiredWhen, `${type} ${path}`).toEqual([
        { when, equals: condition?.const, require: schema.then?.required },
      ]);
    }
    const withRequiredWhen = allPairs.filter((pair) => pair.table.requiredWhen !== undefined);
    expect(withRequiredWhen.length).toBe(conditionals.length);
  });

  it('flags exactly the [metadata*] exception fields with their structural degradation', () => {
    const flagged: Record<string, Record<string, string>> = {};
    for (const pair of allPairs) {
      if (pair.table.metadataException === undefined) continue;
      (flagged[pair.type] ??= {})[pair.path] = pair.table.metadataException;
    }
    expect(flagged).toEqual(metadataExceptions);
    // Every node the schemas mark as gated by exception is among them.
    const markedInSchemas = allPairs.filter((pair) => /by exception/i.test(pair.schema.$comment ?? ''));
    expect(markedInSchemas.length).toBeGreaterThan(0);
    for (const pair of markedInSchemas) {
      expect(pair.table.metadataException, `${pair.type} ${pair.path}`).toBeDefined();
    }
  });

  it('looks members up by own name only', () => {
    const properties = (payloadSchemaFor('agent.presence') as { properties: PayloadProperties }).properties;
    expect(payloadField(properties, 'state')?.capture).toBe('metadata');
    expect(payloadField(properties, '__proto__')).toBeUndefined();
    expect(payloadField(properties, 'toString')).toBeUndefined();
  });
});
