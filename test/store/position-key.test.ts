import { describe, expect, it } from 'vitest';
import { positionKey, positionOfKey, seqLessKey } from '../../src/store/position-key.ts';

describe('position keys', () => {
  it('sort sequenced positions by (epoch, seq) as strings', () => {
    const positions = [[0, 0], [0, 9], [0, 10], [0, 2 ** 40], [1, 0], [12, 3], [2 ** 53 - 1, 2 ** 53 - 1]] as const;
    const keys = positions.map(([epoch, seq]) => positionKey(epoch, seq));
    expect([...keys].sort()).toEqual(keys);
  });

  it('place a seq-less event after its anchor and before the next position, in arrival order', () => {
    const anchor = positionKey(0, 5);
    const first = seqLessKey(anchor, '01A');
    const second = seqLessKey(anchor, '01B');
    const anchoredOnSeqLess = seqLessKey(second, '01C');
    const ordered = [positionKey(0, 4), anchor, first, second, anchoredOnSeqLess, positionKey(0, 6), positionKey(1, 0)];
    expect([...ordered].sort()).toEqual(ordered);
  });

  it('place seq-less events of a session without positions before every position', () => {
    expect([positionKey(0, 0), seqLessKey(undefined, '01Z')].sort()[0]).toBe(seqLessKey(undefined, '01Z'));
  });

  it('report the position a key stands at', () => {
    expect(positionOfKey('s', positionKey(3, 187))).toEqual({ session: 's', epoch: 3, seq: 187 });
    expect(positionOfKey('s', seqLessKey(positionKey(2, 7), '01A'))).toEqual({ session: 's', epoch: 2, seq: 7 });
    expect(positionOfKey('s', seqLessKey(undefined, '01A'))).toEqual({ session: 's', epoch: 0, seq: 0 });
  });
});
