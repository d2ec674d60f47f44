import { describe, expect, it } from 'vitest';
import type { AepEvent, JsonObject } from '../../../src/protocol/event.ts';
import { StreamChecker, streamViolations } from '../../../src/protocol/conformance/stream-rules.ts';

const SOURCE = 'aep://h/agent/a/session/s1';

let counter = 0;
/** A session-scoped event from the owning emitter; ids are fresh unless given. */
function event(type: string, seq: number, extra: Partial<AepEvent> = {}): AepEvent {
  counter += 1;
  return {
    aep: '0.1',
    id: `E${counter}`,
    type,
    time: '2026-07-03T10:00:00Z',
    source: SOURCE,
    agent: 'a',
    session: 's1',
    seq,
    ...extra,
  };
}

function rules(events: AepEvent[]): string[] {
  return streamViolations(events).map((found) => found.rule);
}

const form: JsonObject = {
  kind: 'form',
  prompt: 'Configure',
  fields: [
    { id: 'db', type: 'select', label: 'Database', choices: [{ id: '1', label: 'PostgreSQL' }, { id: '2', label: 'SQLite' }] },
    { id: 'regions', type: 'select', multi: true, label: 'Regions', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] },
    { id: 'free', type: 'select', other: true, label: 'Free', choices: [{ id: 'x', label: 'X' }] },
    { id: 'name', type: 'string', label: 'Name' },
  ],
};

function answered(subject: string, seq: number, values: JsonObject): AepEvent {
  return event('attention.answered', seq, { subject, data: { answer: { values }, via: 'control' } });
}

describe('StreamChecker accepts', () => {
  it('byte-identical redelivery of any event', () => {
    const ended = event('session.ended', 0);
    const ack = event('control.accepted', 1, { cause: 'CMD' });
    expect(rules([ended, ack, ended, ack, { ...ack }])).toEqual([]);
  });

  it('redelivery with keys in another order', () => {
    const first = event('run.finished', 0, { run: 'r1', data: { b: 1, a: [1, { d: 2, c: 3 }] } });
    const reordered = JSON.parse('{"data":{"a":[1,{"c":3,"d":2}],"b":1}}') as JsonObject;
    expect(rules([first, { ...first, ...reordered } as AepEvent])).toEqual([]);
  });

  it('the same id from two sources', () => {
    const one = event('run.started', 0, { run: 'r1' });
    expect(rules([one, { ...one, source: 'aep://other', run: 'r2' }])).toEqual([]);
  });

  it('gaps in seq and a declared new epoch', () => {
    expect(rules([event('progress.status', 0), event('progress.status', 7), event('progress.status', 0, { epoch: 1 }), event('progress.status', 1, { epoch: 1 })])).toEqual([]);
  });

  it('the same session name under two emitters, each with its own counter', () => {
    expect(rules([event('progress.status', 5), event('progress.status', 0, { source: 'aep://b' })])).toEqual([]);
  });

  it('foreign-emitter and agent-scoped events without positions', () => {
    const command = event('control.cancel', 0, { source: 'aep://sender', data: { scope: 'run' } });
    delete command.seq;
    const presence = event('agent.presence', 0);
    delete presence.session;
    delete presence.seq;
    expect(rules([event('progress.status', 3), command, presence, event('progress.status', 4)])).toEqual([]);
  });

  it('one terminal per run and late events after it', () => {
    expect(rules([event('run.finished', 0, { run: 'r1' }), event('run.failed', 1, { run: 'r2' }), event('tool.completed', 2, { run: 'r1' })])).toEqual([]);
  });

  it('run terminals with the same run name in different sessions', () => {
    expect(rules([event('run.finished', 0, { run: 'r1' }), event('run.finished', 0, { run: 'r1', session: 's2' })])).toEqual([]);
  });

  it('session.ended after every request is closed', () => {
    const first = event('attention.requested', 0);
    const second = event('attention.requested', 1);
    expect(rules([
      first,
      second,
      event('attention.resolved', 2, { subject: first.id }),
      event('attention.timeout', 3, { subject: second.id }),
      event('session.ended', 4),
    ])).toEqual([]);
  });

  it('form answers that use choice ids, or free text where other:true allows it', () => {
    const request = event('attention.requested', 0, { data: form });
    expect(rules([request, answered(request.id, 1, { db: '2', regions: ['a', 'b'], free: 'anything', name: 'text' })])).toEqual([]);
  });

  it('one ack per command, and acks for different commands', () => {
    expect(rules([event('control.accepted', 0, { cause: 'C1' }), event('control.rejected', 1, { cause: 'C2', data: { reason: 'busy' } })])).toEqual([]);
  });
});

describe('StreamChecker reports', () => {
  it('an id reused for different content', () => {
    const first = event('progress.status', 0);
    expect(rules([first, { ...first, seq: 1 }])).toEqual(['AEP-0001 §7.4']);
  });

  it('a seq below or at the high-water mark of its epoch', () => {
    expect(rules([event('progress.status', 5), event('progress.status', 3)])).toEqual(['AEP-0001 §7.2']);
    expect(rules([event('progress.status', 5), event('progress.status', 5)])).toEqual(['AEP-0001 §7.2']);
  });

  it('an epoch regression', () => {
    expect(rules([event('progress.status', 0, { epoch: 2 }), event('progress.status', 9, { epoch: 1 })])).toEqual(['AEP-0001 §7.2']);
  });

  it('a second distinct run terminal, across epochs too', () => {
    expect(rules([event('run.finished', 0, { run: 'r1' }), event('run.cancelled', 0, { run: 'r1', epoch: 1 })])).toEqual(['AEP-0002 §2']);
  });

  it('a second distinct session.ended', () => {
    expect(rules([event('session.ended', 0), event('session.ended', 1)])).toEqual(['AEP-0002 §2']);
  });

  it('a session that ends with a pending request', () => {
    const request = event('attention.requested', 0);
    const found = streamViolations([request, event('attention.answered', 1, { subject: request.id }), event('session.ended', 2)]);
    expect(found.map((item) => item.rule)).toEqual(['AEP-0002 §7.2']);
    expect(found[0]?.message).toContain(request.id);
  });

  it('a request closed only by another emitter', () => {
    const request = event('attention.requested', 0);
    const closed = event('attention.resolved', 0, { subject: request.id, source: 'aep://elsewhere' });
    expect(rules([request, closed, event('session.ended', 1)])).toEqual(['AEP-0002 §7.2']);
  });

  it('a second distinct ack decision for one command', () => {
    expect(rules([event('control.accepted', 0, { cause: 'C1' }), event('control.rejected', 1, { cause: 'C1', data: { reason: 'busy' } })])).toEqual(['AEP-0004 §3']);
  });

  it('non-choice answers to closed selects, single and multi', () => {
    const request = event('attention.requested', 0, { data: form });
    const found = streamViolations([request, answered(request.id, 1, { db: 'MariaDB', regions: ['a', 'zz'] })]);
    expect(found.map((item) => [item.rule, item.path])).toEqual([
      ['AEP-0002 §5.3', 'data.answer.values.db'],
      ['AEP-0002 §5.3', 'data.answer.values.regions'],
    ]);
  });

  it('several violations of one event together', () => {
    expect(rules([event('session.ended', 5), event('attention.requested', 6), event('session.ended', 2)])).toEqual([
      'AEP-0001 §7.2',
      'AEP-0002 §2',
      'AEP-0002 §7.2',
    ]);
  });
});

describe('StreamChecker is robust', () => {
  it('is incremental: each check reports only what that event adds', () => {
    const checker = new StreamChecker();
    expect(checker.check(event('progress.status', 4))).toEqual([]);
    expect(checker.check(event('progress.status', 2)).map((item) => item.rule)).toEqual(['AEP-0001 §7.2']);
    expect(checker.check(event('progress.status', 5))).toEqual([]);
  });

  it('forgets the oldest entries past its bound instead of growing', () => {
    const checker = new StreamChecker({ maxEntries: 2 });
    const first = event('progress.status', 0, { session: 'a' });
    checker.check(first);
    checker.check(event('progress.status', 0, { session: 'b' }));
    checker.check(event('progress.status', 0, { session: 'c' }));
    // Session a's high-water mark and first's digest are forgotten, so a conflicting reuse of
    // both its id and its position goes unnoticed: the bound trades completeness for memory.
    expect(checker.check({ ...first, time: '2026-07-03T11:00:00Z' })).toEqual([]);
    const unbounded = new StreamChecker();
    unbounded.check(first);
    expect(unbounded.check({ ...first, time: '2026-07-03T11:00:00Z' }).map((item) => item.rule)).toEqual(['AEP-0001 §7.4', 'AEP-0001 §7.2']);
  });

  it('does not reach Object.prototype through a __proto__ field id', () => {
    const data = JSON.parse('{"kind":"form","prompt":"p","fields":[{"id":"__proto__","type":"select","label":"l","choices":[{"id":"1","label":"x"}]}]}') as JsonObject;
    const request = event('attention.requested', 0, { data });
    expect(rules([request, answered(request.id, 1, {})])).toEqual([]);
    const values = JSON.parse('{"__proto__":"nope"}') as JsonObject;
    expect(rules([request, answered(request.id, 1, values)])).toEqual(['AEP-0002 §5.3']);
  });

  it('handles cyclic and deeply nested content without throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    let deep: unknown = {};
    for (let depth = 0; depth < 100_000; depth += 1) deep = [deep];
    const checker = new StreamChecker();
    expect(checker.check(event('progress.status', 0, { data: cyclic as JsonObject }))).toEqual([]);
    expect(checker.check(event('progress.status', 1, { data: { deep } as JsonObject }))).toEqual([]);
  });

  it('reports a throwing proxy instead of throwing', () => {
    const trap = () => {
      throw new Error('trap');
    };
    const hostile = new Proxy(event('progress.status', 0), { get: trap, ownKeys: trap });
    expect(new StreamChecker().check(hostile).map((item) => item.rule)).toEqual(['AEP-0001 §5']);
  });
});
