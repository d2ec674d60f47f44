import { describe, expect, it } from 'vitest';
import { StreamChecker } from '../../../src/protocol/conformance/stream-rules.ts';
import { validateEvent } from '../../../src/protocol/conformance/validate.ts';
import { readFixtureJsonl, reportCorpus } from '../../support/aep-corpus.ts';

const golden = readFixtureJsonl('golden/golden.jsonl');
const labelled = golden.map((event, index): [string, unknown] => {
  const record = event as { id?: unknown; type?: unknown };
  return [`line ${index + 1}: ${String(record.type)} ${String(record.id)}`, event];
});

describe('golden corpus', () => {
  it('is not empty', () => {
    expect(golden.length).toBeGreaterThan(0);
    reportCorpus('golden', golden.length);
  });

  it.each(labelled)('%s passes the full event check', (_label, event) => {
    expect(validateEvent(event)).toEqual({ ok: true, event });
  });

  it('passes the stream rules as one stream, in file order', () => {
    const checker = new StreamChecker();
    const found = golden.map((event, index) => {
      const result = validateEvent(event);
      return result.ok ? checker.check(result.event).map((item) => ({ line: index + 1, ...item })) : [];
    });
    expect(found.flat()).toEqual([]);
  });

  it('passes the stream rules again when every event is delivered twice', () => {
    // At-least-once delivery (AEP-0001 §7.4): redelivering each event right after itself is legal.
    const checker = new StreamChecker();
    const found = golden.flatMap((event) => {
      const result = validateEvent(event);
      return result.ok ? [...checker.check(result.event), ...checker.check(structuredClone(result.event))] : [];
    });
    expect(found).toEqual([]);
  });
});
