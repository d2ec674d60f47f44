/**
 * The fault layer's plan parser (`local/faults/fault-plan.ts`): a malformed `AEP_FAULTS` stops
 * the stack with the reason instead of running with faults other than those asked for.
 */
import { describe, expect, it } from 'vitest';
import { parseFaultPlan, seededRandom } from '../../local/faults/fault-plan.ts';

describe('fault plan', () => {
  it('accepts the documented shape and an empty plan', () => {
    expect(parseFaultPlan('{}')).toEqual({});
    const plan = {
      seed: 7,
      dynamo: [{ commands: ['PutItemCommand'], tables: ['aep-local-events'], error: 'InternalServerError', rate: 0.2, skip: 1, count: 5, phase: 'after' }],
      fanout: { mode: 'report', count: 3, every: 2, minRecords: 2 },
      connections: [{ userAgent: 'slow', status: 429, count: 2, kind: 'event' }],
    };
    expect(parseFaultPlan(JSON.stringify(plan))).toEqual(plan);
  });

  it('refuses what it does not understand, naming it', () => {
    for (const [text, reason] of [
      ['not json', /not JSON/],
      ['[]', /must be an object/],
      ['{"dynamo":[{"error":"Boom"}]}', /dynamo\[0\]\.error/],
      ['{"dynamo":[{"error":"ThrottlingException","rate":2}]}', /rate/],
      ['{"dynamo":[{"error":"ThrottlingException","commands":["PutItem"]}]}', /command names/],
      ['{"dynamo":[{"error":"ThrottlingException","phase":"during"}]}', /phase/],
      ['{"fanout":{"mode":"explode"}}', /fanout\.mode/],
      ['{"fanout":{"mode":"throw","every":0}}', /every/],
      ['{"connections":[{"status":429}]}', /userAgent/],
      ['{"connections":[{"userAgent":"x","status":404}]}', /status/],
      ['{"typo":1}', /unknown fault plan member/],
    ] as const) {
      expect(() => parseFaultPlan(text), text).toThrow(reason);
    }
  });

  it('draws the same fault sequence from the same seed', () => {
    const first = seededRandom(42);
    const second = seededRandom(42);
    const draws = Array.from({ length: 100 }, () => first());
    expect(Array.from({ length: 100 }, () => second())).toEqual(draws);
    expect(draws.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(new Set(draws).size).toBe(100);
  });
});
