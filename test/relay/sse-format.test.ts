import { describe, expect, it } from 'vitest';
import { replayExhaustedComment, sseComment, sseEventMessage } from '../../src/relay/sse/sse-format.ts';
import { parseStreamRequest } from '../../src/relay/sse/stream-request.ts';
import { RelayError } from '../../src/errors/relay-error.ts';

const event = { aep: '0.1', id: 'e1', type: 'tool.completed', time: '2026-07-03T10:00:00Z', source: 'aep://h/agent/a', agent: 'a', session: 'team:s1', seq: 4, epoch: 2 };

describe('SSE framing', () => {
  it('writes event, one-line data and a {session}:{epoch}:{seq} id', () => {
    const text = JSON.stringify(event);
    expect(sseEventMessage(event, text)).toBe(`event: tool.completed\ndata: ${text}\nid: team:s1:2:4\n\n`);
  });

  it('writes no id for agent-scoped events', () => {
    const heartbeat = { aep: '0.1', id: 'h', type: 'agent.heartbeat', time: '2026-07-03T10:00:00Z', source: 'aep://h/agent/a', agent: 'a' };
    expect(sseEventMessage(heartbeat, JSON.stringify(heartbeat))).not.toContain('id:');
  });

  it('never lets a session with a line break inject a field', () => {
    const hostile = { ...event, session: 's\nid: forged\nevent: x' };
    const message = sseEventMessage(hostile, JSON.stringify(hostile));
    expect(message.split('\n').filter((line) => line.startsWith('id:') || line.startsWith('event:'))).toEqual(['event: tool.completed']);
  });

  it('puts pretty-printed stored JSON on one data line', () => {
    const message = sseEventMessage(event, JSON.stringify(event, null, 2));
    expect(message.split('\n').filter((line) => line.startsWith('data: '))).toHaveLength(1);
  });

  it('folds line breaks in comments', () => {
    expect(sseComment('a\nb')).toBe(': a b\n\n');
    expect(replayExhaustedComment('s', { epoch: 1, seq: 9 })).toBe(': replay-exhausted s 1:9\n\n');
  });
});

describe('stream requests', () => {
  it('read filter, capture, from and live', () => {
    const parsed = parseStreamRequest({ filter: '{"session":"s"}', capture: 'metadata', from: '[{"session":"s","epoch":0,"seq":3}]', live: '0' }, undefined, 10);
    if (parsed instanceof RelayError) throw parsed;
    expect(parsed).toMatchObject({ filter: { session: 's' }, ceiling: 'metadata', from: [{ session: 's', epoch: 0, seq: 3 }], live: false });
  });

  it('resume from Last-Event-ID unless from is given', () => {
    const resumed = parseStreamRequest({}, 'a:b:1:2', 10);
    if (resumed instanceof RelayError) throw resumed;
    expect(resumed.from).toEqual([{ session: 'a:b', epoch: 1, seq: 2 }]);
    const explicit = parseStreamRequest({ from: 'all' }, 'a:b:1:2', 10);
    if (explicit instanceof RelayError) throw explicit;
    expect(explicit.from).toBe('all');
  });

  it('refuse bad members with 400 from the closed code set', () => {
    const cases: Array<[Record<string, string>, string | undefined, string]> = [
      [{ filter: '{"time":"x"}' }, undefined, 'invalid-filter'],
      [{ capture: 'secret' }, undefined, 'invalid-filter'],
      [{ from: '{}' }, undefined, 'invalid-filter'],
      [{ from: JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ session: `s${i}`, epoch: 0, seq: 0 }))) }, undefined, 'limit-exceeded'],
      [{}, 'no-position', 'invalid-filter'],
      [{ live: '2' }, undefined, 'invalid-filter'],
    ];
    for (const [query, lastEventId, code] of cases) {
      const parsed = parseStreamRequest(query, lastEventId, 10);
      expect(parsed).toBeInstanceOf(RelayError);
      expect((parsed as RelayError).status).toBe(400);
      expect((parsed as RelayError).code).toBe(code);
    }
  });
});
