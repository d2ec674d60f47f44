import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { otlpLogsRequest } from '../../../src/protocol/bridges/otlp-json.ts';
import { severityOfOtlpNumber, toOtlpLogRecord } from '../../../src/protocol/bridges/otlp-logs.ts';
import type { AepEvent } from '../../../src/protocol/event.ts';
import { SEVERITIES } from '../../../src/protocol/levels.ts';
import { fixturesDir, readFixtureJsonl, reportCorpus } from '../../support/aep-corpus.ts';

const golden = readFixtureJsonl('golden/golden.jsonl') as AepEvent[];
// The pins hold nanosecond timestamps past 2^53: read integers exactly, as the JSON text has them.
const pins = JSON.parse(readFileSync(join(fixturesDir(), 'otlp', 'otlp-expected.json'), 'utf8'), (_key, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? '') ? BigInt(context?.source as string) : value,
) as Record<string, unknown>;
const cases = Object.entries(pins).map(([index, expected]): [string, AepEvent, unknown] => {
  const event = golden[Number(index)] as AepEvent;
  return [`golden[${index}] ${event.type} (capture ${event.capture ?? 'metadata'})`, event, expected];
});

describe('OTLP export corpus (AEP-0005 §3, §5.3)', () => {
  it('has pinned projections', () => {
    expect(cases.length).toBeGreaterThan(0);
    reportCorpus('otlp', cases.length);
  });

  it.each(cases)('%s projects exactly to its pinned LogRecord at the default ceiling', (_label, event, expected) => {
    expect(toOtlpLogRecord(event)).toEqual(expected);
  });

  it('keeps the payload of an above-metadata event when the ceiling admits it', () => {
    const redacted = golden.find((event) => event.type === 'tool.failed' && event.capture === 'redacted') as AepEvent;
    expect(toOtlpLogRecord(redacted, 'metadata').body).toBeUndefined();
    expect(toOtlpLogRecord(redacted, 'redacted').body).toEqual(Object.fromEntries(Object.entries(redacted.data ?? {}).filter(([name]) => !name.startsWith('gen_ai.'))));
  });

  it('exports a capture none event without a body', () => {
    const event = { ...(golden[3] as AepEvent), capture: 'none' };
    const record = toOtlpLogRecord(event, 'full');
    expect(record.body).toBeUndefined();
    expect(record.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it('buckets OTel severity numbers back to the six AEP levels, round-tripping each level', () => {
    const buckets = Array.from({ length: 24 }, (_, index) => severityOfOtlpNumber(index + 1));
    expect(buckets).toEqual([...Array(8).fill('debug'), 'info', 'notice', 'notice', 'notice', ...Array(4).fill('warning'), ...Array(4).fill('error'), ...Array(4).fill('critical')]);
    for (const level of SEVERITIES) {
      expect(severityOfOtlpNumber(toOtlpLogRecord({ ...(golden[3] as AepEvent), severity: level }).severity_number)).toBe(level);
    }
    expect(severityOfOtlpNumber(0)).toBeUndefined();
    expect(severityOfOtlpNumber(25)).toBeUndefined();
  });
});

describe('OTLP/HTTP JSON encoding', () => {
  it('encodes records as an ExportLogsServiceRequest grouped by service, int64 as strings, ids in hex', () => {
    const records = [toOtlpLogRecord(golden[3] as AepEvent), toOtlpLogRecord(golden[24] as AepEvent)];
    const request = otlpLogsRequest(records) as { resourceLogs: Array<{ resource: unknown; scopeLogs: Array<{ logRecords: Array<Record<string, unknown>> }> }> };
    expect(request.resourceLogs).toHaveLength(1);
    const [logRecord] = request.resourceLogs[0]?.scopeLogs[0]?.logRecords ?? [];
    expect(request.resourceLogs[0]?.resource).toEqual({ attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] });
    expect(logRecord).toMatchObject({
      timeUnixNano: '1783073704221000000',
      severityNumber: 9,
      severityText: 'INFO',
      eventName: 'dev.aep.tool.completed',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    expect(logRecord?.attributes).toContainEqual({ key: 'gen_ai.usage.input_tokens', value: { intValue: '142' } });
    expect(logRecord?.body).toEqual({
      kvlistValue: {
        values: [
          { key: 'tool', value: { kvlistValue: { values: [{ key: 'name', value: { stringValue: 'Bash' } }, { key: 'call_id', value: { stringValue: 't_91' } }] } } },
          { key: 'status', value: { stringValue: 'success' } },
          { key: 'duration_ms', value: { intValue: '1240' } },
        ],
      },
    });
  });
});
