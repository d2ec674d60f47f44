import { describe, expect, it } from 'vitest';
import { fromCloudEvent, toCloudEvent } from '../../../src/protocol/bridges/cloudevents.ts';
import type { AepEvent } from '../../../src/protocol/event.ts';
import { readFixtureJson, readFixtureJsonl, reportCorpus } from '../../support/aep-corpus.ts';

const golden = readFixtureJsonl('golden/golden.jsonl') as AepEvent[];
const pinned = readFixtureJsonl('ce-roundtrip/ce-expected.jsonl');
const inbound = readFixtureJson<{ cases: Array<{ name: string; rule: string; ce: unknown; expected: unknown }> }>('ce-roundtrip/inbound-cases.json').cases;
const lines = golden.map((event, index): [string, AepEvent, unknown] => [`line ${index + 1}: ${event.type} ${event.id}`, event, pinned[index]]);

describe('CloudEvents bridge corpus (AEP-0005 §1, §2, §5.1, §5.5)', () => {
  it('pins one CloudEvent per golden event', () => {
    expect(pinned).toHaveLength(golden.length);
    reportCorpus('ce-roundtrip', pinned.length);
    reportCorpus('ce-inbound', inbound.length);
  });

  it.each(lines)('%s maps forward to its pinned CloudEvent, member order included', (_label, event, expected) => {
    expect(JSON.stringify(toCloudEvent(event))).toBe(JSON.stringify(expected));
  });

  it.each(lines)('%s comes back bit for bit through the inverse', (_label, event) => {
    const inverse = fromCloudEvent(toCloudEvent(event));
    expect(inverse).toEqual({ ok: true, event, dropped: [] });
  });

  it.each(inbound.map((testCase): [string, unknown, unknown] => [testCase.name, testCase.ce, testCase.expected]))('inbound: %s', (_name, ce, expected) => {
    const inverse = fromCloudEvent(ce);
    expect(inverse.ok && inverse.event).toEqual(expected);
  });

  it('lists the grammar-illegal extension it drops (the §2 rule 2 diagnostic)', () => {
    const illegal = inbound.find((testCase) => testCase.name.startsWith('grammar-illegal'));
    expect(illegal).toBeDefined();
    expect(fromCloudEvent(illegal?.ce)).toMatchObject({ ok: true, dropped: ['aep_bad'] });
  });
});

describe('fromCloudEvent refusals', () => {
  const base = toCloudEvent(golden[0] as AepEvent);

  it('leaves a foreign CloudEvent type out of scope (AEP-0005 §2.3)', () => {
    expect(fromCloudEvent({ ...base, type: 'com.example.thing' })).toMatchObject({ ok: false, refusal: { code: 'foreign-type', rule: 'AEP-0005 §2.3' } });
  });

  it.each([
    ['a JSON array', [base]],
    ['another specversion', { ...base, specversion: '0.3' }],
    ['binary data', { ...base, data: undefined, data_base64: 'e30=' }],
    ['a non-JSON datacontenttype', { ...base, datacontenttype: 'text/plain' }],
  ])('refuses %s as not-a-cloudevent', (_label, value) => {
    expect(fromCloudEvent(JSON.parse(JSON.stringify(value)))).toMatchObject({ ok: false, refusal: { code: 'not-a-cloudevent' } });
  });

  it('drops extensions that would overwrite a core attribute or are not scalars', () => {
    const inverse = fromCloudEvent({ ...base, session: 'hijack', acmeobject: { nested: true }, acmeflag: true });
    expect(inverse).toMatchObject({ ok: true, dropped: ['session', 'acmeobject'] });
    expect(inverse.ok && inverse.event.session).toBe('s_8f2c');
    expect(inverse.ok && inverse.event.acmeflag).toBe(true);
  });
});
