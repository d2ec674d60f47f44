import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_REPORTED_VIOLATIONS, envelopeViolations, validateEnvelope } from '../../src/protocol/envelope.ts';
import type { Violation } from '../../src/protocol/violation.ts';

/** A minimal valid session-scoped event; each test changes one thing. */
function base(): Record<string, unknown> {
  return {
    aep: '0.1',
    id: '01JX9YB3P4T9',
    type: 'tool.completed',
    time: '2026-07-03T10:15:04.221Z',
    source: 'aep://host-a/agent/claude-code/session/s_8f2c',
    agent: 'claude-code',
    session: 's_8f2c',
    seq: 187,
  };
}

function withChanges(changes: Record<string, unknown>, removed: string[] = []): Record<string, unknown> {
  const event = { ...base(), ...changes };
  for (const name of removed) delete event[name];
  return event;
}

function rulesAt(violations: Violation[]): Array<[string, string | undefined]> {
  return violations.map((found) => [found.rule, found.path]);
}

describe('validateEnvelope accepts', () => {
  const valid: Array<[name: string, event: Record<string, unknown>]> = [
    ['the minimal session-scoped event', base()],
    ['every optional attribute', withChanges({
      subject: 'Bash', run: 'r_1', step: 'turn-3', epoch: 2, cause: '01JX9YB2Z1QK', severity: 'critical',
      capture: 'full', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', data: {},
    })],
    ['seq 0 and epoch 0', withChanges({ seq: 0, epoch: 0 })],
    ['the largest safe seq', withChanges({ seq: Number.MAX_SAFE_INTEGER })],
    ['an agent-scoped event without session attributes', withChanges({ type: 'agent.heartbeat' }, ['session', 'seq'])],
    ['an agent-scoped event with an epoch', withChanges({ type: 'agent.health', epoch: 1 }, ['session', 'seq'])],
    ['a command with session and no seq', withChanges({ type: 'control.cancel', run: 'r_1' }, ['seq'])],
    ['a vendor command with no seq', withChanges({ type: 'x.acme.control.reboot' }, ['seq'])],
    ['attention.routed without seq', withChanges({ type: 'attention.routed', subject: '01J' }, ['seq'])],
    ['a vendor type', withChanges({ type: 'x.claude-code.session.config_change' })],
    ['an unregistered type in a registered category', withChanges({ type: 'tool.teleported' })],
    ['string, integer and boolean extensions', withChanges({ acmeregion: 'eu-1', acmecount: -3, acmeflag: false, a: '' })],
    ['a 20-character extension name', withChanges({ abcdefghij0123456789: 'v' })],
    ['a numeric offset', withChanges({ time: '2026-07-03T12:15:04+02:00' })],
    ['a lowercase t and z', withChanges({ time: '2026-07-03t10:15:04.5z' })],
    ['a leap day', withChanges({ time: '2024-02-29T00:00:00Z' })],
    ['a leap second at 23:59:60 UTC', withChanges({ time: '2016-12-31T23:59:60Z' })],
    ['a leap second expressed in a local offset', withChanges({ time: '2016-12-31T18:59:60-05:00' })],
    ['an urn source', withChanges({ source: 'urn:aep:agent:a' })],
  ];

  it.each(valid)('%s', (_name, event) => {
    expect(envelopeViolations(event)).toEqual([]);
    const result = validateEnvelope(event);
    expect(result).toEqual({ ok: true, event });
    if (result.ok) expect(result.event).toBe(event);
  });
});

describe('validateEnvelope rejects', () => {
  const invalid: Array<[name: string, event: unknown, expected: Array<[rule: string, path: string | undefined]>]> = [
    ['a missing required attribute', withChanges({}, ['agent']), [['AEP-0001 §5.1', 'agent']]],
    ['a null optional attribute', withChanges({ run: null }), [['AEP-0001 §5.1', 'run']]],
    ['a null required attribute', withChanges({ id: null }), [['AEP-0001 §5.1', 'id']]],
    ['a null session on a session-scoped event', withChanges({ session: null }), [['AEP-0001 §5.1', 'session'], ['AEP-0001 §5.2', 'session']]],
    ['null data', withChanges({ data: null }), [['AEP-0001 §5.1', 'data']]],
    ['another envelope version', withChanges({ aep: '0.2' }), [['AEP-0001 §5.1 #1', 'aep']]],
    ['a numeric version', withChanges({ aep: 0.1 }), [['AEP-0001 §5.1 #1', 'aep']]],
    ['an empty id', withChanges({ id: '' }), [['AEP-0001 §5.1 #2', 'id']]],
    ['a numeric id', withChanges({ id: 7 }), [['AEP-0001 §5.1 #2', 'id']]],
    ['an empty subject', withChanges({ subject: '' }), [['AEP-0001 §5.1 #4', 'subject']]],
    ['an empty agent', withChanges({ agent: '' }), [['AEP-0001 §5.1 #7', 'agent']]],
    ['an empty run', withChanges({ run: '' }), [['AEP-0001 §5.1 #9', 'run']]],
    ['an array cause', withChanges({ cause: ['a'] }), [['AEP-0001 §5.1 #13', 'cause']]],
    ['a single-segment type', withChanges({ type: 'tool' }), [['AEP-0001 §6', 'type']]],
    ['an unknown category', withChanges({ type: 'banana.peeled' }), [['AEP-0002 §3', 'type']]],
    ['a short vendor type', withChanges({ type: 'x.acme.foo' }), [['AEP-0001 §6', 'type']]],
    ['time without a timezone', withChanges({ time: '2026-07-03T10:15:04' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['a date without a time', withChanges({ time: '2026-07-03' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['a space separator', withChanges({ time: '2026-07-03 10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['month 13', withChanges({ time: '2026-13-03T10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['February 30', withChanges({ time: '2026-02-30T10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['February 29 outside a leap year', withChanges({ time: '2023-02-29T10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['February 29 in a century year', withChanges({ time: '1900-02-29T10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['April 31', withChanges({ time: '2026-04-31T10:15:04Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['hour 24', withChanges({ time: '2026-07-03T24:00:00Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['minute 60', withChanges({ time: '2026-07-03T10:60:00Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['a leap second that is not 23:59 UTC', withChanges({ time: '2026-07-03T10:15:60Z' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['an offset of 24 hours', withChanges({ time: '2026-07-03T10:15:04+24:00' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['an offset without a colon', withChanges({ time: '2026-07-03T10:15:04+0200' }), [['AEP-0001 §5.1 #5', 'time']]],
    ['an epoch-milliseconds time', withChanges({ time: 1783073704221 }), [['AEP-0001 §5.1 #5', 'time']]],
    ['a source without a scheme', withChanges({ source: 'host-a/agent/claude-code' }), [['AEP-0001 §5.1 #6', 'source']]],
    ['a source with a space', withChanges({ source: 'aep://host a/agent' }), [['AEP-0001 §5.1 #6', 'source']]],
    ['a source with a newline', withChanges({ source: 'aep://host/agent\n' }), [['AEP-0001 §5.1 #6', 'source']]],
    ['a negative seq', withChanges({ seq: -1 }), [['AEP-0001 §5.1 #11', 'seq']]],
    ['a fractional seq', withChanges({ seq: 1.5 }), [['AEP-0001 §5.1 #11', 'seq']]],
    ['a huge seq', withChanges({ seq: 1e300 }), [['AEP-0001 §5.1 #11', 'seq']]],
    ['a seq just past 2^53-1', withChanges({ seq: 2 ** 53 }), [['AEP-0001 §5.1 #11', 'seq']]],
    ['a string seq', withChanges({ seq: '3' }), [['AEP-0001 §5.1 #11', 'seq']]],
    ['a negative epoch', withChanges({ epoch: -2 }), [['AEP-0001 §5.1 #12', 'epoch']]],
    ['an infinite epoch', withChanges({ epoch: Number.POSITIVE_INFINITY }), [['AEP-0001 §5.1 #12', 'epoch']]],
    ['a malformed traceparent', withChanges({ traceparent: 'not-a-traceparent' }), [['AEP-0001 §5.1 #14', 'traceparent']]],
    ['an uppercase traceparent', withChanges({ traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01' }), [['AEP-0001 §5.1 #14', 'traceparent']]],
    ['an unknown severity', withChanges({ severity: 'fatal' }), [['AEP-0001 §8.1', 'severity']]],
    ['a numeric severity', withChanges({ severity: 3 }), [['AEP-0001 §8.1', 'severity']]],
    ['an unknown capture', withChanges({ capture: 'everything' }), [['AEP-0001 §8.2', 'capture']]],
    ['array data', withChanges({ data: [] }), [['AEP-0001 §5.1 #17', 'data']]],
    ['string data', withChanges({ data: 'hi' }), [['AEP-0001 §5.1 #17', 'data']]],
    ['a session-scoped event without session', withChanges({}, ['session']), [['AEP-0001 §5.2', 'session']]],
    ['a session-scoped event without seq', withChanges({}, ['seq']), [['AEP-0001 §5.2', 'seq']]],
    ['an agent-scoped event with every session attribute', withChanges({ type: 'agent.presence', run: 'r', step: 's' }),
      [['AEP-0001 §5.2', 'session'], ['AEP-0001 §5.2', 'run'], ['AEP-0001 §5.2', 'step'], ['AEP-0001 §5.2', 'seq']]],
    ['a command with seq', withChanges({ type: 'control.cancel' }), [['AEP-0004 §2.2', 'seq']]],
    ['a vendor command with seq', withChanges({ type: 'x.acme.control.reboot' }), [['AEP-0004 §2.2', 'seq']]],
    ['a command without session', withChanges({ type: 'control.pause' }, ['session', 'seq']), [['AEP-0004 §2.2', 'session']]],
    ['attention.routed with seq', withChanges({ type: 'attention.routed' }), [['AEP-0001 §5.2', 'seq']]],
    ['attention.routed without session', withChanges({ type: 'attention.routed' }, ['session', 'seq']), [['AEP-0001 §5.2', 'session']]],
    ['a float extension value', withChanges({ acmescore: 0.5 }), [['AEP-0001 §5.4', 'acmescore']]],
    ['a null extension value', withChanges({ acmenote: null }), [['AEP-0001 §5.4', 'acmenote']]],
    ['an object extension value', withChanges({ acmemeta: { k: 1 } }), [['AEP-0001 §5.4', 'acmemeta']]],
    ['an array extension value', withChanges({ acmelist: [1] }), [['AEP-0001 §5.4', 'acmelist']]],
    ['an uppercase extension name', withChanges({ acmeRegion: 'eu' }), [['AEP-0001 §5.4', 'acmeRegion']]],
    ['a 21-character extension name', withChanges({ abcdefghij0123456789x: 'v' }), [['AEP-0001 §5.4', 'abcdefghij0123456789x']]],
    ['an extension name with an underscore', withChanges({ acme_ext: 'v' }), [['AEP-0001 §5.4', 'acme_ext']]],
    ['an empty extension name', withChanges({ '': 'v' }), [['AEP-0001 §5.4', '']]],
    ['a __proto__ key from JSON.parse', JSON.parse(JSON.stringify(base()).replace('{', '{"__proto__":{"polluted":true},')),
      [['AEP-0001 §5.4', '__proto__'], ['AEP-0001 §5.4', '__proto__']]],
    ['null', null, [['AEP-0001 §5', undefined]]],
    ['an array', [base()], [['AEP-0001 §5', undefined]]],
    ['a JSON string', JSON.stringify(base()), [['AEP-0001 §5', undefined]]],
    ['a number', 42, [['AEP-0001 §5', undefined]]],
    ['undefined', undefined, [['AEP-0001 §5', undefined]]],
  ];

  it.each(invalid)('%s', (_name, event, expected) => {
    const violations = envelopeViolations(event);
    expect(violations.length).toBeGreaterThan(0);
    expect(rulesAt(violations)).toEqual(expected);
    for (const found of violations) expect(found.message.length).toBeGreaterThan(0);
    const result = validateEnvelope(event);
    expect(result).toEqual({ ok: false, violations });
  });

  it('collects every violation instead of stopping at the first', () => {
    const event = withChanges({ aep: '1.0', type: 'Tool', time: 'yesterday', severity: 'loud', acme_x: 1.5 }, ['agent', 'seq']);
    expect(rulesAt(envelopeViolations(event))).toEqual([
      ['AEP-0001 §5.1', 'agent'],
      ['AEP-0001 §5.1 #1', 'aep'],
      ['AEP-0001 §6', 'type'],
      ['AEP-0001 §5.1 #5', 'time'],
      ['AEP-0001 §8.1', 'severity'],
      ['AEP-0001 §5.2', 'seq'],
      ['AEP-0001 §5.4', 'acme_x'],
      ['AEP-0001 §5.4', 'acme_x'],
    ]);
  });

  it('summarizes past the reporting cap', () => {
    const event = base();
    for (let index = 0; index < 1000; index += 1) event[`BAD_${index}`] = 'v';
    const violations = envelopeViolations(event);
    expect(violations).toHaveLength(MAX_REPORTED_VIOLATIONS);
    expect(violations.at(-1)?.message).toMatch(/further violations/);
  });
});

describe('hostile input', () => {
  it('does not pollute Object.prototype through a parsed __proto__ key', () => {
    const event = JSON.parse('{"__proto__":{"polluted":true},"aep":"0.1"}') as unknown;
    validateEnvelope(event);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('ignores inherited attributes', () => {
    const event = Object.create(base()) as Record<string, unknown>;
    expect(rulesAt(envelopeViolations(event)).filter(([rule]) => rule === 'AEP-0001 §5.1')).toHaveLength(6);
  });

  it('never runs getters', () => {
    let called = false;
    const event = base();
    Object.defineProperty(event, 'agent', {
      enumerable: true,
      get() {
        called = true;
        return 'claude-code';
      },
    });
    expect(rulesAt(envelopeViolations(event))).toEqual([['AEP-0001 §5.1 #7', 'agent']]);
    expect(called).toBe(false);
  });

  it('reports a throwing proxy instead of throwing', () => {
    const trap = () => {
      throw new Error('trap');
    };
    const event = new Proxy(base(), { ownKeys: trap, get: trap, getOwnPropertyDescriptor: trap });
    expect(rulesAt(envelopeViolations(event))).toEqual([['AEP-0001 §5', undefined]]);
  });

  it('accepts deeply nested data without walking it', () => {
    let nested: unknown = {};
    for (let depth = 0; depth < 100_000; depth += 1) nested = { nested };
    expect(envelopeViolations(withChanges({ data: nested }))).toEqual([]);
  });

  it('never throws on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true, withBigInt: true }), (value) => {
        expect(Array.isArray(envelopeViolations(value))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary JSON merged into a valid event', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (extra) => {
        const event = { ...base(), ...extra };
        const violations = envelopeViolations(event);
        for (const found of violations) expect(found.rule).toMatch(/^AEP-000\d §/);
      }),
      { numRuns: 500 },
    );
  });
});
