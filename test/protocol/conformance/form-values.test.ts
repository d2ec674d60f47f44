import { describe, expect, it } from 'vitest';
import { gateFormValues } from '../../../src/protocol/conformance/form-values.ts';
import type { CaptureLevel } from '../../../src/protocol/levels.ts';
import { readFixtureJson, reportCorpus } from '../../support/aep-corpus.ts';

interface GatingCase {
  name: string;
  fields: unknown[];
  values: Record<string, unknown>;
  ceiling: CaptureLevel;
  expect: Record<string, unknown>;
}

const corpus = readFixtureJson<{ cases: GatingCase[] }>('capture-gating/cases.json').cases;

const fields = [
  { id: 'name', type: 'string', label: 'Service name' },
  { id: 'replicas', type: 'number', label: 'Replica count' },
  { id: 'staged', type: 'boolean', label: 'Staging first?' },
  { id: 'regions', type: 'select', label: 'Regions', multi: true, choices: [{ id: '1', label: 'us' }, { id: '2', label: 'eu' }] },
  { id: 'db', type: 'select', label: 'Database', other: true, choices: [{ id: '1', label: 'PostgreSQL' }] },
];

describe('gateFormValues over the official corpus', () => {
  it('runs every case', () => {
    reportCorpus('capture-gating', corpus.length);
    expect(corpus.length).toBeGreaterThan(0);
  });

  it.each(corpus.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => {
    const values = structuredClone(testCase.values);
    expect(gateFormValues(testCase.fields, values, testCase.ceiling)).toEqual(testCase.expect);
    expect(values).toEqual(testCase.values);
  });
});

describe('gateFormValues', () => {
  it('keeps structural answers and drops text at every ceiling below redacted', () => {
    const values = { name: 'billing', replicas: 2, staged: false, regions: ['2'], db: '1' };
    for (const ceiling of ['none', 'metadata'] as const) {
      expect(gateFormValues(fields, values, ceiling)).toEqual({ replicas: 2, staged: false, regions: ['2'], db: '1' });
    }
    expect(gateFormValues(fields, values, 'full')).toEqual(values);
  });

  it('treats a value whose kind does not match its field as text below redacted', () => {
    const values = { replicas: 'three', staged: 'yes', regions: ['1', 'somewhere else'], db: ['1'] };
    expect(gateFormValues(fields, values, 'metadata')).toEqual({ db: ['1'] });
    expect(gateFormValues(fields, values, 'redacted')).toEqual(values);
  });

  it('returns an empty object for values or fields that are not the expected shape', () => {
    expect(gateFormValues(fields, 'SECRET', 'redacted')).toEqual({});
    expect(gateFormValues(fields, null, 'metadata')).toEqual({});
    expect(gateFormValues('not a list', { staged: true }, 'redacted')).toEqual({});
    expect(gateFormValues([null, 3, { id: 5, type: 'boolean' }, { id: 'staged' }], { staged: true }, 'redacted')).toEqual({});
  });

  it('uses the first field_spec when a request repeats an id', () => {
    const repeated = [{ id: 'x', type: 'string' }, { id: 'x', type: 'number' }];
    expect(gateFormValues(repeated, { x: 4 }, 'metadata')).toEqual({});
  });

  it('keeps a key named __proto__ as plain data', () => {
    const hostileFields = [{ id: '__proto__', type: 'boolean', label: 'x' }];
    const values = JSON.parse('{"__proto__": true}') as unknown;
    const gated = gateFormValues(hostileFields, values, 'metadata');
    expect(Object.hasOwn(gated, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(gated)).toBe(Object.prototype);
  });
});
