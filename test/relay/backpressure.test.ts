import { describe, expect, it } from 'vitest';
import { backpressureAction } from '../../src/relay/domain/backpressure.ts';

describe('backpressureAction', () => {
  it.each([
    ['debug', 'drop'],
    ['info', 'drop'],
    [undefined, 'drop'],
    ['not-a-severity', 'drop'],
    ['notice', 'disconnect'],
    ['warning', 'disconnect'],
    ['error', 'disconnect'],
    ['critical', 'disconnect'],
  ])('answers %s with %s (AEP-0003 §8.4)', (severity, action) => {
    expect(backpressureAction(severity)).toBe(action);
  });
});
