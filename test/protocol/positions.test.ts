import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Position } from '../../src/protocol/positions.ts';
import { comparePositions, encodeSseId, parseFrom, parseSseId, positionOf } from '../../src/protocol/positions.ts';

const at = (epoch: number, seq: number): Position => ({ session: 's1', epoch, seq });

describe('comparePositions', () => {
  it.each([
    [at(0, 1), at(0, 2), -1],
    [at(0, 2), at(0, 1), 1],
    [at(0, 5), at(0, 5), 0],
    [at(0, 999), at(1, 0), -1],
    [at(2, 0), at(1, 999), 1],
  ])('orders (%o, %o) as %i', (a, b, sign) => {
    expect(Math.sign(comparePositions(a, b))).toBe(sign);
  });

  it('sorts lexicographically by epoch then seq', () => {
    const sorted = [at(1, 0), at(0, 7), at(1, 3), at(0, 2)].sort(comparePositions);
    expect(sorted.map((p) => [p.epoch, p.seq])).toEqual([[0, 2], [0, 7], [1, 0], [1, 3]]);
  });
});

describe('positionOf', () => {
  it.each([
    ['a sequenced event', { type: 'tool.completed', session: 's1', seq: 4, epoch: 2 }, { session: 's1', epoch: 2, seq: 4 }],
    ['epoch defaulting to 0', { type: 'tool.completed', session: 's1', seq: 4 }, { session: 's1', epoch: 0, seq: 4 }],
    ['an agent-scoped event', { type: 'agent.heartbeat' }, undefined],
    ['a foreign-emitter event without seq', { type: 'control.session.stop', session: 's1' }, undefined],
    ['a negative seq', { type: 'tool.completed', session: 's1', seq: -1 }, undefined],
    ['a fractional epoch', { type: 'tool.completed', session: 's1', seq: 1, epoch: 0.5 }, undefined],
    ['a string seq', { type: 'tool.completed', session: 's1', seq: '1' }, undefined],
    ['an empty session', { type: 'tool.completed', session: '', seq: 1 }, undefined],
  ])('reads %s', (_label, event, expected) => {
    expect(positionOf(event)).toEqual(expected);
  });
});

describe('SSE ids', () => {
  it.each([
    [{ session: 's_8f2c', epoch: 3, seq: 187 }, 's_8f2c:3:187'],
    [{ session: 'a:b', epoch: 0, seq: 0 }, 'a:b:0:0'],
    [{ session: '::', epoch: 1, seq: 2 }, ':::1:2'],
    [{ session: 'ünï 🙂', epoch: 0, seq: 9 }, 'ünï 🙂:0:9'],
  ])('encodes %o as %s and parses it back', (position, text) => {
    expect(encodeSseId(position)).toBe(text);
    expect(parseSseId(text)).toEqual(position);
  });

  it.each([
    ['carriage return', 'a\rid: x'],
    ['line feed', 'a\nevent: x'],
    ['NUL', 'a\0b'],
    ['empty session', ''],
  ])('refuses to encode a session containing %s', (_label, session) => {
    expect(encodeSseId({ session, epoch: 0, seq: 1 })).toBeUndefined();
  });

  it.each([
    ['empty text', ''],
    ['no colons', 'abc'],
    ['one colon', 's:5'],
    ['empty session', ':0:5'],
    ['empty epoch', 's::5'],
    ['empty seq', 's:0:'],
    ['negative epoch', 's:-1:5'],
    ['negative seq', 's:0:-5'],
    ['signed seq', 's:0:+5'],
    ['fractional seq', 's:0:1.5'],
    ['exponent seq', 's:0:1e3'],
    ['hex seq', 's:0:0x10'],
    ['leading zero', 's:0:05'],
    ['space padding', 's:0: 5'],
    ['unsafe seq', `s:0:${2 ** 53}`],
    ['huge epoch', `s:${'9'.repeat(400)}:1`],
    ['CR in the session', 's\r:0:1'],
    ['LF in the seq', 's:0:1\n'],
    ['NUL in the session', 's\0x:0:1'],
  ])('rejects an id with %s', (_label, text) => {
    expect(parseSseId(text)).toBeUndefined();
  });

  it('round-trips any session free of CR, LF and NUL', () => {
    const session = fc.string({ unit: 'binary', minLength: 1 }).filter((s) => !/[\r\n\0]/.test(s));
    const counter = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(session, counter, counter, (s, epoch, seq) => {
        const position = { session: s, epoch, seq };
        const id = encodeSseId(position);
        expect(id).toBeDefined();
        expect(parseSseId(id as string)).toEqual(position);
      }),
      { numRuns: 400 },
    );
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const parsed = parseSseId(text);
        if (parsed !== undefined) expect(encodeSseId(parsed)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseFrom', () => {
  const limits = { maxPositions: 3 };

  it('accepts the literal all', () => {
    expect(parseFrom('all', limits)).toEqual({ ok: true, from: 'all' });
  });

  it.each([
    ['an empty array', [], []],
    ['one position', [{ session: 's1', epoch: 0, seq: 5 }], [{ session: 's1', epoch: 0, seq: 5 }]],
    ['unknown members ignored', [{ session: 's1', epoch: 1, seq: 2, source: 'x' }], [{ session: 's1', epoch: 1, seq: 2 }]],
    ['seq -1 with epoch 0: before the first position', [{ session: 's1', epoch: 0, seq: -1 }], [{ session: 's1', epoch: 0, seq: -1 }]],
    ['before the first position kept over a later one of the session', [{ session: 's1', epoch: 0, seq: 3 }, { session: 's1', epoch: 0, seq: -1 }], [{ session: 's1', epoch: 0, seq: -1 }]],
    [
      'a repeated session keeping the earliest position in first-seen order',
      [
        { session: 's1', epoch: 1, seq: 9 },
        { session: 's2', epoch: 0, seq: 1 },
        { session: 's1', epoch: 0, seq: 40 },
      ],
      [{ session: 's1', epoch: 0, seq: 40 }, { session: 's2', epoch: 0, seq: 1 }],
    ],
  ])('accepts %s', (_label, value, from) => {
    expect(parseFrom(value, limits)).toEqual({ ok: true, from });
  });

  it.each([
    ['an object', { session: 's1', epoch: 0, seq: 1 }, /from must be/],
    ['a number', 5, /from must be/],
    ['another string', 'ALL', /from must be/],
    ['null', null, /from must be/],
    ['undefined', undefined, /from must be/],
    ['a non-object member', ['s1:0:1'], /from\[0\]/],
    ['a null member', [null], /from\[0\]/],
    ['a missing session', [{ epoch: 0, seq: 1 }], /from\[0\]\.session/],
    ['an empty session', [{ session: '', epoch: 0, seq: 1 }], /from\[0\]\.session/],
    ['a numeric session', [{ session: 1, epoch: 0, seq: 1 }], /from\[0\]\.session/],
    ['a missing epoch', [{ session: 's1', seq: 1 }], /from\[0\]\.epoch/],
    ['a negative epoch', [{ session: 's1', epoch: -1, seq: 1 }], /from\[0\]\.epoch/],
    ['a string seq', [{ session: 's1', epoch: 0, seq: '1' }], /from\[0\]\.seq/],
    ['seq -1 in an epoch other than 0', [{ session: 's1', epoch: 2, seq: -1 }], /from\[0\]\.seq/],
    ['any other negative seq', [{ session: 's1', epoch: 0, seq: -2 }], /from\[0\]\.seq/],
    ['a fractional seq', [{ session: 's1', epoch: 0, seq: 1.5 }], /from\[0\]\.seq/],
    ['an unsafe seq', [{ session: 's1', epoch: 0, seq: 2 ** 53 }], /from\[0\]\.seq/],
    ['a bad second member', [{ session: 's1', epoch: 0, seq: 1 }, { session: 's2' }], /from\[1\]/],
  ])('refuses %s as invalid-filter', (_label, value, detail) => {
    const result = parseFrom(value, limits);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('invalid-filter');
    expect(result.detail).toMatch(detail);
  });

  it('refuses more positions than the limit as limit-exceeded, naming the limit', () => {
    const four = Array.from({ length: 4 }, (_, index) => ({ session: `s${index}`, epoch: 0, seq: 0 }));
    expect(parseFrom(four, limits)).toEqual({
      ok: false,
      code: 'limit-exceeded',
      detail: expect.stringMatching(/4 .*maxPositions.* 3/),
    });
  });

  it('refuses an oversized array before looking at its members', () => {
    const junk = Array.from({ length: 1_000_000 }, () => 'junk');
    const result = parseFrom(junk, limits);
    expect(result.ok ? undefined : result.code).toBe('limit-exceeded');
  });

  it('never throws on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(typeof parseFrom(value, { maxPositions: 100 }).ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });
});
