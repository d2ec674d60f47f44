import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/protocol/event.ts';
import { payloadViolations } from '../../../src/protocol/conformance/payload.ts';
import type { Violation } from '../../../src/protocol/violation.ts';
import { readFixtureJson, readFixtureJsonl, reportCorpus } from '../../support/aep-corpus.ts';

interface InvalidCase {
  name: string;
  rule: string;
  event?: AepEvent;
}

const golden = readFixtureJsonl('golden/golden.jsonl') as AepEvent[];
// The invalid corpus mixes envelope, stream and payload rules; only single-event payload-schema
// cases are this validator's business.
const invalidPayloadCases = readFixtureJson<{ cases: InvalidCase[] }>('invalid/cases.json').cases.filter(
  (testCase): testCase is InvalidCase & { event: AepEvent } =>
    testCase.event !== undefined && /payload schema|field_spec/.test(testCase.rule),
);

const formRequest = {
  kind: 'form',
  prompt: 'Configure',
  fields: [
    { id: 'name', type: 'string', label: 'Name' },
    { id: 'db', type: 'select', label: 'Database', choices: [{ id: '1', label: 'PostgreSQL' }] },
  ],
};

const badPayloads: Array<{ name: string; type: string; data: unknown; expect: Array<Pick<Violation, 'rule' | 'path'>> }> = [
  {
    name: 'agent.presence with a state outside its enum',
    type: 'agent.presence',
    data: { state: 'sleeping' },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.state' }],
  },
  {
    name: 'agent.presence missing the required state',
    type: 'agent.presence',
    data: { detail: 'up' },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.state' }],
  },
  {
    name: 'session.compacted with a non-integer token count',
    type: 'session.compacted',
    data: { estimated_token_count: 12.5 },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.estimated_token_count' }],
  },
  {
    name: 'run.finished with a negative duration',
    type: 'run.finished',
    data: { duration_ms: -1 },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.duration_ms' }],
  },
  {
    name: 'run.finished usage with a string token count (dotted member name)',
    type: 'run.finished',
    data: { 'gen_ai.usage.input_tokens': '12' },
    expect: [{ rule: 'AEP-0002 §5', path: 'data["gen_ai.usage.input_tokens"]' }],
  },
  {
    name: 'run.finished cost without currency',
    type: 'run.finished',
    data: { cost: { total: 0.01 } },
    expect: [{ rule: 'AEP-0002 §5.2', path: 'data.cost.currency' }],
  },
  {
    name: 'tool.completed cost with a string amount and a negative breakdown',
    type: 'tool.completed',
    data: { tool: { name: 'Bash' }, cost: { currency: 'USD', total: '$0.01', cache: -1 } },
    expect: [
      { rule: 'AEP-0002 §5.2', path: 'data.cost.total' },
      { rule: 'AEP-0002 §5.2', path: 'data.cost.cache' },
    ],
  },
  {
    name: 'tool.failed missing tool and error',
    type: 'tool.failed',
    data: {},
    expect: [
      { rule: 'AEP-0002 §5', path: 'data.tool' },
      { rule: 'AEP-0002 §5', path: 'data.error' },
    ],
  },
  {
    name: 'tool.requested tool_ref without a name',
    type: 'tool.requested',
    data: { tool: { call_id: 't1' } },
    expect: [{ rule: 'AEP-0002 §5.2', path: 'data.tool.name' }],
  },
  {
    name: 'tool.completed result of a kind the schema does not allow',
    type: 'tool.completed',
    data: { tool: { name: 'Bash' }, result: 42 },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.result' }],
  },
  {
    name: 'attention.requested select field without choices',
    type: 'attention.requested',
    data: { ...formRequest, fields: [{ id: 'db', type: 'select', label: 'Database' }] },
    expect: [{ rule: 'AEP-0002 §5.2', path: 'data.fields[0].choices' }],
  },
  {
    name: 'attention.requested field_spec with an unknown type and a choice without a label',
    type: 'attention.requested',
    data: {
      ...formRequest,
      fields: [
        { id: 'when', type: 'date', label: 'When' },
        { id: 'db', type: 'select', label: 'Database', choices: [{ id: '1' }] },
      ],
    },
    expect: [
      { rule: 'AEP-0002 §5.2', path: 'data.fields[0].type' },
      { rule: 'AEP-0002 §5.2', path: 'data.fields[1].choices[0].label' },
    ],
  },
  {
    name: 'attention.requested with a malformed expires_at and an unknown respond_via',
    type: 'attention.requested',
    data: { kind: 'input', prompt: 'p', expires_at: '2026-02-30T10:00:00Z', respond_via: ['control', 'email'] },
    expect: [
      { rule: 'AEP-0002 §5', path: 'data.expires_at' },
      { rule: 'AEP-0002 §5', path: 'data.respond_via[1]' },
    ],
  },
  {
    name: 'attention.answered without answer',
    type: 'attention.answered',
    data: { via: 'control' },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.answer' }],
  },
  {
    name: 'progress.status percent above 100',
    type: 'progress.status',
    data: { percent: 101 },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.percent' }],
  },
  {
    name: 'state.delta with a non-array delta',
    type: 'state.delta',
    data: { delta: 'replace /x 1' },
    expect: [{ rule: 'AEP-0002 §5', path: 'data.delta' }],
  },
  {
    name: 'resource.citation.recorded with a non-integer offset',
    type: 'resource.citation.recorded',
    data: { citations: [{ source: { id: 'd' }, offset: { page: { page: 'two' } } }] },
    expect: [{ rule: 'AEP-0002 §5.2', path: 'data.citations[0].offset.page.page' }],
  },
  {
    name: 'data that is not an object',
    type: 'run.started',
    data: ['user'],
    expect: [{ rule: 'AEP-0002 §5', path: 'data' }],
  },
];

describe('payloadViolations', () => {
  it('finds no violation in any golden event', () => {
    reportCorpus('golden payloads', golden.length);
    expect(golden.length).toBeGreaterThan(0);
    const found = golden.flatMap((event) =>
      payloadViolations(event.type, event.data).map((v) => `${event.id} ${event.type}: ${v.path} ${v.message}`),
    );
    expect(found).toEqual([]);
  });

  it('finds a violation in every single-event payload case of the invalid corpus', () => {
    reportCorpus('invalid payloads', invalidPayloadCases.length);
    expect(invalidPayloadCases.length).toBeGreaterThan(0);
    for (const { name, event } of invalidPayloadCases) {
      expect(payloadViolations(event.type, event.data).length, name).toBeGreaterThan(0);
    }
  });

  it.each(badPayloads.map((testCase) => [testCase.name, testCase] as const))('reports %s', (_name, testCase) => {
    const found = payloadViolations(testCase.type, testCase.data);
    expect(found.map(({ rule, path }) => ({ rule, path }))).toEqual(testCase.expect);
    for (const v of found) expect(v.message).toContain(v.path ?? '');
  });

  it('allows members the schema does not name', () => {
    expect(payloadViolations('agent.presence', { state: 'busy', acme_note: { any: ['thing'] } })).toEqual([]);
    expect(payloadViolations('tool.completed', { tool: { name: 'Bash', acme: 1 }, cost: { currency: 'EUR', acme_tax: 0.2 } })).toEqual([]);
  });

  it('accepts an integer where a number is expected and a select with its choices', () => {
    expect(payloadViolations('progress.status', { percent: 50 })).toEqual([]);
    expect(payloadViolations('attention.requested', formRequest)).toEqual([]);
    expect(payloadViolations('attention.requested', { kind: 'input', prompt: 'p', expires_at: '2026-07-03T10:00:00.5+02:00' })).toEqual([]);
  });

  it('finds nothing to check for unregistered types or absent data', () => {
    expect(payloadViolations('x.acme.session.blob', 'anything at all')).toEqual([]);
    expect(payloadViolations('message.user.submitted', { text: 3 })).toEqual([]);
    expect(payloadViolations('__proto__', {})).toEqual([]);
    expect(payloadViolations('tool.completed', undefined)).toEqual([]);
  });

  it('ignores inherited names on hostile data', () => {
    const data = JSON.parse('{"state":"online","__proto__":{"state":"sleeping"},"constructor":1}') as unknown;
    expect(payloadViolations('agent.presence', data)).toEqual([]);
    const missing = JSON.parse('{"__proto__":{"state":"online"}}') as unknown;
    expect(payloadViolations('agent.presence', missing).map((v) => v.path)).toEqual(['data.state']);
  });
});
