import { describe, expect, it } from 'vitest';
import { parseClientMessage } from '../../../src/protocol/client-message.ts';
import { FrameBudgets, overBudgetRefusal } from '../../../src/relay/socket/frame-budget.ts';
import { answeringOf, refusalFrame } from '../../../src/relay/socket/socket-refusals.ts';

describe('per-connection frame budget', () => {
  it('passes a burst, then the rate, per connection', () => {
    let now = 0;
    const budgets = new FrameBudgets(10, 5, () => now);
    const taken = Array.from({ length: 7 }, () => budgets.take('c1'));
    expect(taken).toEqual([true, true, true, true, true, false, false]);
    // Another connection has its own bucket.
    expect(budgets.take('c2')).toBe(true);
    // 10 frames a second: one more every 100 ms, never more than the burst.
    now = 100;
    expect([budgets.take('c1'), budgets.take('c1')]).toEqual([true, false]);
    now = 60_000;
    expect(Array.from({ length: 6 }, () => budgets.take('c1')).filter(Boolean)).toHaveLength(5);
  });

  it('passes every frame with a rate of 0, and starts a forgotten connection afresh', () => {
    const unlimited = new FrameBudgets(0, 1, () => 0);
    expect(Array.from({ length: 1000 }, () => unlimited.take('c')).every(Boolean)).toBe(true);
    const budgets = new FrameBudgets(1, 1, () => 0);
    expect([budgets.take('c'), budgets.take('c')]).toEqual([true, false]);
    budgets.forget('c');
    expect(budgets.take('c')).toBe(true);
  });

  it('answers an over-budget frame with limit-exceeded, naming its id or its event id, and drops frames that are never answered', () => {
    const refusal = (text: string) => {
      const answering = answeringOf(parseClientMessage(text));
      return answering === undefined ? undefined : refusalFrame(overBudgetRefusal(100), answering);
    };
    expect(refusal('{"type":"subscribe","id":"s1","filter":{}}')).toMatchObject({ type: 'error', code: 'limit-exceeded', id: 's1' });
    expect(refusal('{"type":"unsubscribe","id":"s2"}')).toMatchObject({ type: 'error', code: 'limit-exceeded', id: 's2' });
    expect(refusal('{"type":"tool.requested","id":"e1"}')).toMatchObject({ type: 'error', code: 'limit-exceeded', cause: 'e1' });
    expect(refusal('{"type":"ping"}')?.detail).toMatch(/100 frames per second/);
    expect(refusal('{"type":"pong"}')).toBeUndefined();
    expect(refusal('{"type":"whatever"}')).toBeUndefined();
  });
});
