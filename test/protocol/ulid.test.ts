import { describe, expect, it } from 'vitest';
import { ULID_PATTERN, encodeUlidTime, ulidFactory } from '../../src/protocol/ulid.ts';

const zeros = (length: number) => new Uint8Array(length);

describe('ulid', () => {
  it('encodes the time prefix in Crockford base 32', () => {
    expect(encodeUlidTime(0)).toBe('0000000000');
    expect(encodeUlidTime(1469918176385)).toBe('01ARYZ6S41');
  });

  it('mints 26-character ids in the ULID alphabet', () => {
    const mint = ulidFactory(() => 1_700_000_000_000, (length) => crypto.getRandomValues(new Uint8Array(length)));
    for (let count = 0; count < 100; count += 1) expect(mint()).toMatch(ULID_PATTERN);
  });

  it('sorts ids minted in the same millisecond in minting order', () => {
    const mint = ulidFactory(() => 42, zeros);
    const ids = Array.from({ length: 50 }, () => mint());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
  });

  it('sorts ids by time across milliseconds', () => {
    let clock = 1000;
    const mint = ulidFactory(() => clock, (length) => new Uint8Array(length).fill(255));
    const first = mint();
    clock += 1;
    const second = mint();
    expect(first < second).toBe(true);
  });

  it('refuses times outside the 48-bit range', () => {
    expect(() => encodeUlidTime(-1)).toThrow(RangeError);
    expect(() => encodeUlidTime(2 ** 48)).toThrow(RangeError);
  });
});
