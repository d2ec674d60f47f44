import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateFilter } from '../../src/protocol/attr-match.ts';
import { validateEnvelope } from '../../src/protocol/envelope.ts';
import { parseClientMessage } from '../../src/protocol/client-message.ts';

// Random JSON values, including objects shaped like events and frames, reach every entry
// point that takes client input. Each must return a verdict, never throw.
const eventLike = fc.record(
  {
    aep: fc.oneof(fc.constant('0.1'), fc.string()),
    id: fc.oneof(fc.string(), fc.integer()),
    type: fc.oneof(fc.constantFrom('tool.completed', 'agent.presence', 'control.cancel', 'x.acme.tool.ran', 'hello', 'subscribe'), fc.string()),
    time: fc.oneof(fc.constant('2026-07-03T10:00:00Z'), fc.string()),
    source: fc.oneof(fc.constant('aep://h/agent/a'), fc.string()),
    agent: fc.string(),
    session: fc.oneof(fc.string(), fc.constant(null)),
    seq: fc.oneof(fc.integer(), fc.double(), fc.constant(null)),
    data: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const anyJson = fc.oneof(fc.jsonValue(), eventLike);

describe('hostile JSON', () => {
  it('gets a verdict from the envelope validator, the filter validator and the frame parser', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const envelope = validateEnvelope(value);
        expect(typeof envelope.ok).toBe('boolean');
        const filter = validateFilter(value);
        expect(typeof filter.ok).toBe('boolean');
        const message = parseClientMessage(JSON.stringify(value) ?? 'null');
        expect(typeof message.kind).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });

  it('gets a verdict from the frame parser for arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(typeof parseClientMessage(text).kind).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });
});
