import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Filter, MatchableEvent } from '../../src/protocol/attr-match.ts';
import { compileFilter, firstTypeSegment, sessionEqualityOf, typeSegmentsOf, validateFilter } from '../../src/protocol/attr-match.ts';
import { readFixtureJson, reportCorpus } from '../support/aep-corpus.ts';

interface MatchCase {
  name: string;
  filter: unknown;
  event: MatchableEvent;
  match: boolean;
}

interface InvalidCase {
  name: string;
  filter: unknown;
}

const corpus = readFixtureJson<{ match: MatchCase[]; invalid: InvalidCase[] }>('attr-match/cases.json');
reportCorpus('attr-match', corpus.match.length + corpus.invalid.length);

/** Validates, failing the test if the filter is refused, then compiles. */
function compile(filter: unknown): (event: MatchableEvent) => boolean {
  const validated = validateFilter(filter);
  if (!validated.ok) throw new Error(`filter unexpectedly refused: ${validated.reason}`);
  return compileFilter(validated.filter);
}

function validFilter(filter: unknown): Filter {
  const validated = validateFilter(filter);
  if (!validated.ok) throw new Error(`filter unexpectedly refused: ${validated.reason}`);
  return validated.filter;
}

function refusal(filter: unknown): string {
  const validated = validateFilter(filter);
  if (validated.ok) throw new Error(`filter unexpectedly accepted: ${JSON.stringify(filter)}`);
  return validated.reason;
}

describe('attr-match corpus', () => {
  it('has cases to run', () => {
    expect(corpus.match.length).toBeGreaterThan(0);
    expect(corpus.invalid.length).toBeGreaterThan(0);
  });

  it.each(corpus.match.map((c) => [c.name, c] as const))('gives the golden verdict: %s', (_name, c) => {
    expect(compile(c.filter)(c.event)).toBe(c.match);
  });

  it.each(corpus.invalid.map((c) => [c.name, c] as const))('rejects the invalid filter: %s', (_name, c) => {
    expect(refusal(c.filter)).not.toBe('');
  });
});

describe('validateFilter', () => {
  it.each([
    ['a string', 'type'],
    ['null', null],
    ['an array', [{ type: 'tool.completed' }]],
    ['a number', 3],
    ['undefined', undefined],
  ])('rejects a filter that is %s', (_label, filter) => {
    expect(refusal(filter)).toMatch(/JSON object/);
  });

  it.each([
    ['null value', { agent: null }, 'agent'],
    ['float value', { epoch: 1.5 }, 'epoch'],
    ['unsafe integer', { epoch: 2 ** 53 }, 'epoch'],
    ['object on a non-severity key', { agent: { eq: 'x' } }, 'agent'],
    ['nested array', { agent: [['a']] }, 'agent'],
    ['null inside inclusion', { agent: ['a', null] }, 'agent'],
    ['object inside inclusion', { run: [{}] }, 'run'],
    ['bare star', { type: '*' }, 'type'],
    ['bare star in inclusion', { type: ['tool.*', '*'] }, 'type'],
    ['dot-star with empty prefix', { type: '.*' }, 'type'],
    ['star in the middle', { type: 'tool.*.started' }, 'type'],
    ['star without dot', { type: 'tool*' }, 'type'],
    ['double pattern', { type: 'x.*.*' }, 'type'],
    ['pattern on session', { session: 's.*' }, 'session'],
    ['glob on an extension key', { acmeregion: 'eu-*' }, 'acmeregion'],
    ['pattern in a non-type inclusion', { agent: ['codex', 'claude*'] }, 'agent'],
    ['severity comparison with no bound', { severity: {} }, 'severity'],
    ['severity comparison with an extra key', { severity: { gte: 'info', eq: 'info' } }, 'severity'],
    ['severity comparison with an unknown level', { severity: { gte: 'loud' } }, 'severity'],
    ['severity comparison with a non-string level', { severity: { lte: 3 } }, 'severity'],
    ['inverted severity band', { severity: { gte: 'error', lte: 'info' } }, 'severity'],
    ['comparison array on severity', { severity: [{ gte: 'info' }] }, 'severity'],
    ['unknown severity equality', { severity: 'loud' }, 'severity'],
    ['unknown severity in inclusion', { severity: ['info', 'Info'] }, 'severity'],
    ['unknown capture equality', { capture: 'everything' }, 'capture'],
    ['integer capture', { capture: 1 }, 'capture'],
    ['uppercase key', { Agent: 'codex' }, 'Agent'],
    ['key over 20 characters', { abcdefghijklmnopqrstu: 1 }, 'abcdefghijklmnopqrstu'],
    ['empty key', { '': 1 }, '""'],
    ['key with a hyphen', { 'acme-region': 'eu' }, 'acme-region'],
    ['__proto__ key', JSON.parse('{"__proto__": "x"}') as unknown, '__proto__'],
    ['seq even inside a valid filter', { type: 'tool.completed', seq: 1 }, 'seq'],
  ])('rejects %s, naming the key', (_label, filter, key) => {
    expect(refusal(filter)).toContain(key);
  });

  it.each([
    ['type pattern', { type: 'attention.*' }],
    ['vendor pattern in inclusion', { type: ['x.acme.*', 'tool.completed'] }],
    ['mixed-type inclusion', { acmeflag: ['yes', 1, true] }],
    ['integer equality on epoch', { epoch: 3 }],
    ['any scalar on type', { type: 7 }],
    ['severity equality', { severity: 'warning' }],
    ['severity inclusion', { severity: ['error', 'critical'] }],
    ['severity lte only', { severity: { lte: 'info' } }],
    ['severity single-level band', { severity: { gte: 'notice', lte: 'notice' } }],
    ['capture inclusion', { capture: ['none', 'full'] }],
    ['extension key of 20 characters', { abcdefghijklmnopqrst: 'v' }],
    ['extension key spelled like a prototype member', { constructor: 'x' }],
    ['string with a dot on a non-type key', { session: 's.1' }],
    ['every filterable core key', {
      id: 'a', type: 'tool.completed', subject: 'Bash', source: 'aep://h', agent: 'a', session: 's', run: 'r',
      step: 'p', epoch: 0, cause: 'c', severity: 'info', capture: 'metadata',
    }],
  ])('accepts %s', (_label, filter) => {
    expect(validateFilter(filter).ok).toBe(true);
  });

  it('returns a copy the caller cannot mutate through the input', () => {
    const input = { agent: ['a', 'b'] };
    const filter = validFilter(input);
    input.agent.push('c');
    expect(filter).toEqual({ agent: ['a', 'b'] });
  });

  it('bounds the key quoted in a reason', () => {
    const reason = refusal({ ['X'.repeat(100_000)]: 1 });
    expect(reason.length).toBeLessThan(300);
  });

  it('never throws on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = validateFilter(value);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on objects with filter-like keys and arbitrary values', () => {
    const key = fc.constantFrom('type', 'severity', 'capture', 'epoch', 'session', 'acme', 'seq', '__proto__', 'constructor');
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue()), (value) => {
        const result = validateFilter(value);
        if (result.ok) expect(typeof compileFilter(result.filter)({ type: 'tool.completed' })).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('handles a huge inclusion array and deep nesting without throwing', () => {
    const many = Array.from({ length: 100_000 }, (_, index) => `s${index}`);
    expect(compile({ session: many })({ type: 'run.started', session: 's99999' })).toBe(true);
    let deep: unknown = 'x';
    for (let depth = 0; depth < 10_000; depth += 1) deep = [deep];
    expect(validateFilter({ agent: deep }).ok).toBe(false);
  });
});

describe('compileFilter', () => {
  const base = { type: 'tool.completed', agent: 'codex', session: 's1' };

  it.each([
    ['integer filter vs string attribute', { acmeshard: 1 }, { ...base, acmeshard: '1' }, false],
    ['string filter vs integer attribute', { acmeshard: '1' }, { ...base, acmeshard: 1 }, false],
    ['boolean filter vs string attribute', { acmeflag: true }, { ...base, acmeflag: 'true' }, false],
    ['integer filter vs boolean attribute', { acmeflag: 1 }, { ...base, acmeflag: true }, false],
    ['integer equality', { acmeshard: 1 }, { ...base, acmeshard: 1 }, true],
    ['boolean equality', { acmeflag: false }, { ...base, acmeflag: false }, true],
    ['mixed inclusion hits the integer', { acmeshard: ['1', 2, true] }, { ...base, acmeshard: 2 }, true],
    ['mixed inclusion hits the boolean', { acmeshard: ['1', 2, true] }, { ...base, acmeshard: true }, true],
    ['mixed inclusion misses a coerced value', { acmeshard: ['1', 2, true] }, { ...base, acmeshard: 1 }, false],
    ['mixed inclusion misses "2"', { acmeshard: ['1', 2, true] }, { ...base, acmeshard: '2' }, false],
    ['absent extension', { acmeregion: 'eu-1' }, base, false],
    ['extension named like a prototype member, absent', { constructor: 'x' }, base, false],
    ['extension named like a prototype member, present', { constructor: 'x' }, { ...base, constructor: 'x' }, true],
    ['object attribute never equals a scalar', { acmeregion: 'eu' }, { ...base, acmeregion: { eu: true } }, false],
    ['case matters', { agent: 'Codex' }, base, false],
  ])('%s', (_label, filter, event, verdict) => {
    expect(compile(filter)(event as MatchableEvent)).toBe(verdict);
  });

  it.each([
    ['attention.requested', true],
    ['attention.routed.late', true],
    ['attention', false],
    ['attention.', false],
    ['attentionx.requested', false],
    ['x.attention.requested', false],
    ['tool.completed', true],
    ['tool.failed', false],
  ])('matches type %s against a pattern-and-exact inclusion: %s', (type, verdict) => {
    expect(compile({ type: ['attention.*', 'tool.completed'] })({ type })).toBe(verdict);
  });

  it('matches a lone pattern given as a scalar like a one-member inclusion', () => {
    const matches = compile({ type: 'x.acme.*' });
    expect(matches({ type: 'x.acme.tool.completed' })).toBe(true);
    expect(matches({ type: 'x.acmex.tool.completed' })).toBe(false);
  });

  it.each([
    ['debug', false],
    ['info', false],
    ['notice', true],
    ['warning', true],
    ['error', true],
    ['critical', false],
    [undefined, false],
    ['loud', false],
  ])('applies the inclusive band notice..error to severity %s', (severity, verdict) => {
    const event = severity === undefined ? { type: 'tool.completed' } : { type: 'tool.completed', severity };
    expect(compile({ severity: { gte: 'notice', lte: 'error' } })(event)).toBe(verdict);
  });

  it.each([
    ['severity equality uses the default info', { severity: 'info' }, true],
    ['severity inclusion uses the default info', { severity: ['debug', 'info'] }, true],
    ['severity lte uses the default info', { severity: { lte: 'info' } }, true],
    ['capture equality uses the default metadata', { capture: 'metadata' }, true],
    ['capture equality misses the default', { capture: 'full' }, false],
    ['epoch equality uses the default 0', { epoch: 0 }, true],
    ['epoch equality misses the default', { epoch: 1 }, false],
    ['subject has no default', { subject: 'Bash' }, false],
  ])('%s', (_label, filter, verdict) => {
    expect(compile(filter)({ type: 'tool.completed' })).toBe(verdict);
  });

  it('treats an attribute present as undefined like an absent one', () => {
    expect(compile({ epoch: 0 })({ type: 'tool.completed', epoch: undefined })).toBe(true);
    expect(compile({ run: 'r' })({ type: 'tool.completed', run: undefined })).toBe(false);
  });

  it('requires every member to match (conjunction)', () => {
    const matches = compile({ type: 'tool.*', agent: 'codex', severity: { gte: 'warning' } });
    expect(matches({ type: 'tool.failed', agent: 'codex', severity: 'error' })).toBe(true);
    expect(matches({ type: 'tool.failed', agent: 'claude-code', severity: 'error' })).toBe(false);
    expect(matches({ type: 'tool.failed', agent: 'codex' })).toBe(false);
  });

  it('never reads data', () => {
    expect(compile({ acmeregion: 'eu' })({ type: 'tool.completed', data: { acmeregion: 'eu' } })).toBe(false);
  });
});

describe('sessionEqualityOf', () => {
  it.each([
    ['no session key', { type: 'tool.*' }, undefined],
    ['scalar session', { session: 's1' }, ['s1']],
    ['inclusion of sessions', { session: ['s1', 's2'] }, ['s1', 's2']],
    ['repeated sessions once', { session: ['s1', 's1'] }, ['s1']],
    ['non-string members dropped', { session: ['s1', 7, true] }, ['s1']],
    ['integer session pins nothing', { session: 7 }, []],
  ])('%s', (_label, filter, sessions) => {
    expect(sessionEqualityOf(validFilter(filter))).toEqual(sessions);
  });
});

describe('typeSegmentsOf', () => {
  it.each([
    ['no type key', { session: 's1' }, undefined],
    ['a category pattern', { type: 'tool.*' }, ['tool']],
    ['an exact type', { type: 'attention.requested' }, ['attention']],
    ['a deeper pattern keeps the category', { type: 'progress.task.*' }, ['progress']],
    ['a vendor pattern indexes under x', { type: 'x.acme.*' }, ['x']],
    ['an inclusion list, each segment once', { type: ['tool.*', 'tool.failed', 'run.*'] }, ['tool', 'run']],
    ['non-string members dropped', { type: ['tool.*', 3] }, ['tool']],
  ])('%s', (_label, filter, segments) => {
    expect(typeSegmentsOf(validFilter(filter))).toEqual(segments);
  });

  it('never leaves out a type the filter matches (the index is complete)', () => {
    const filters = [{ type: 'tool.*' }, { type: ['run.step.*', 'session.ended'] }, { type: 'x.acme.*' }];
    const types = ['tool.requested', 'run.step.started', 'session.ended', 'x.acme.tool.ran', 'run.finished', 'attention.requested'];
    for (const filter of filters) {
      const valid = validFilter(filter);
      const matches = compileFilter(valid);
      const segments = typeSegmentsOf(valid) ?? [];
      for (const type of types) if (matches({ type })) expect(segments).toContain(firstTypeSegment(type));
    }
  });
});
