import { describe, expect, it } from 'vitest';
import { toOcsfRecord } from '../../../src/protocol/bridges/ocsf.ts';
import type { AepEvent } from '../../../src/protocol/event.ts';
import { readFixtureJson, readFixtureJsonl, reportCorpus } from '../../support/aep-corpus.ts';

interface OcsfClass {
  category_uid: number;
  attributes: string[];
  activity: Record<string, string>;
  severity: Record<string, string>;
  status: Record<string, string>;
  disposition: Record<string, string>;
}

const golden = readFixtureJsonl('golden/golden.jsonl') as AepEvent[];
const pins = readFixtureJson<Record<string, Record<string, unknown>>>('ocsf/ocsf-expected.json');
const classes = readFixtureJson<{ version: string; classes: Record<string, OcsfClass> }>('ocsf/ocsf-classes.json');
const cases = Object.entries(pins).map(([index, expected]): [string, AepEvent, Record<string, unknown>] => {
  const event = golden[Number(index)] as AepEvent;
  return [`golden[${index}] ${event.type} (capture ${event.capture ?? 'metadata'})`, event, expected];
});
const PROJECTED = new Set(['session.started', 'session.ended', 'tool.requested', 'tool.completed', 'tool.failed', 'tool.denied', 'attention.requested', 'attention.answered', 'attention.resolved', 'attention.timeout']);

describe('OCSF projection corpus (AEP-0005 §4, §5.6)', () => {
  it('has pinned records', () => {
    expect(cases.length).toBeGreaterThan(0);
    reportCorpus('ocsf', cases.length);
  });

  it.each(cases)('%s projects exactly to its pinned record', (_label, event, expected) => {
    expect(toOcsfRecord(event)).toEqual(expected);
  });

  it.each(golden.filter((event) => PROJECTED.has(event.type)).map((event): [string, AepEvent] => [`${event.type} ${event.id}`, event]))(
    '%s gives a record valid against the pinned class subset',
    (_label, event) => {
      const record = toOcsfRecord(event) as Record<string, number>;
      expect(classes.version).toBe('1.8.0');
      const pinnedClass = classes.classes[String(record.class_uid)] as OcsfClass;
      expect(Object.keys(record).filter((name) => !pinnedClass.attributes.includes(name))).toEqual([]);
      expect(record.category_uid).toBe(pinnedClass.category_uid);
      expect(record.type_uid).toBe((record.class_uid as number) * 100 + (record.activity_id as number));
      expect(pinnedClass.activity[String(record.activity_id)]).toBeDefined();
      expect(pinnedClass.severity[String(record.severity_id)]).toBeDefined();
      if (record.status_id !== undefined) expect(pinnedClass.status[String(record.status_id)]).toBeDefined();
      if (record.disposition_id !== undefined) expect(pinnedClass.disposition[String(record.disposition_id)]).toBeDefined();
    },
  );

  it('gives no record for the families outside §4.2', () => {
    const others = golden.filter((event) => !PROJECTED.has(event.type));
    expect(others.length).toBeGreaterThan(0);
    for (const event of others) expect(toOcsfRecord(event)).toBeUndefined();
  });

  it('claims No Action for a dismissed resolution and nothing for an answered one (§4.5)', () => {
    const answered = golden.find((event) => event.type === 'attention.resolved' && event.data?.resolution === 'answered') as AepEvent;
    expect(toOcsfRecord(answered)).not.toHaveProperty('disposition_id');
    const dismissed = toOcsfRecord({ ...answered, data: { resolution: 'dismissed' } });
    expect(dismissed).toMatchObject({ disposition_id: 16, metadata: { profiles: ['security_control'] } });
  });

  it('carries the payload of a redacted event once the ceiling admits it', () => {
    const failed = golden.find((event) => event.type === 'tool.failed' && event.capture === 'redacted') as AepEvent;
    expect(toOcsfRecord(failed, 'redacted')).toMatchObject({ process: { name: 'Write', uid: 't_93' }, unmapped: { data: failed.data } });
  });
});
