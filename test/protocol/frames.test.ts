import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_VERSIONS } from '../../src/protocol/event.ts';
import { parseClientMessage, selectVersion } from '../../src/protocol/client-message.ts';
import type { ClientMessage } from '../../src/protocol/client-message.ts';
import {
  FRAME_TYPES,
  INVALID_FRAME,
  INVALID_HELLO,
  SUBSCRIBE_ERROR_CODES,
  closing,
  errorFrame,
  helloReply,
  pong,
  replayExhausted,
  rosterReply,
  subscribed,
  unsubscribed,
} from '../../src/protocol/frames.ts';
import { parseSubscribe } from '../../src/protocol/subscribe-request.ts';
import type { SubscribeLimits } from '../../src/protocol/subscribe-request.ts';

const parse = (value: unknown): ClientMessage => parseClientMessage(JSON.stringify(value));

function helloOf(value: unknown) {
  const message = parse(value);
  if (message.kind !== 'hello') throw new Error(`expected a hello, got ${JSON.stringify(message)}`);
  return message.hello;
}

describe('parseClientMessage', () => {
  it.each([
    ['not JSON', '{type: hello}', /not valid JSON/],
    ['empty text', '', /not valid JSON/],
    ['truncated JSON', '{"type":"hello"', /not valid JSON/],
    ['a JSON array', '[{"type":"hello"}]', /JSON object/],
    ['a JSON string', '"hello"', /JSON object/],
    ['JSON null', 'null', /JSON object/],
    ['no type', '{"id":"x"}', /string "type"/],
    ['a numeric type', '{"type":1}', /string "type"/],
    ['an object type', '{"type":{"name":"hello"}}', /string "type"/],
  ])('classifies %s as malformed', (_label, text, detail) => {
    const message = parseClientMessage(text);
    expect(message.kind).toBe('malformed');
    if (message.kind === 'malformed') expect(message.detail).toMatch(detail);
  });

  it.each([
    ['a core type', { type: 'tool.completed', id: '1' }],
    ['a vendor type', { type: 'x.acme.tool.done' }],
    ['a dotted name that shadows a frame', { type: 'hello.world' }],
  ])('hands over %s as an event, unvalidated', (_label, value) => {
    expect(parse(value)).toEqual({ kind: 'event', value });
  });

  it.each([
    ['an unknown type', 'telemetry'],
    ['an empty type', ''],
    ['a type differing in case', 'Hello'],
    ['subscribed (endpoint-only)', 'subscribed'],
    ['unsubscribed (endpoint-only)', 'unsubscribed'],
    ['error (endpoint-only)', 'error'],
    ['replay-exhausted (endpoint-only)', 'replay-exhausted'],
  ])('classifies %s as an ignorable unknown frame', (_label, type) => {
    expect(parse({ type, id: 'x' })).toEqual({ kind: 'unknown-frame', type });
  });

  it.each([
    ['unsubscribe', { type: 'unsubscribe', id: 'sub-1' }, { kind: 'unsubscribe', id: 'sub-1' }],
    ['roster', { type: 'roster', id: 'r-1' }, { kind: 'roster', id: 'r-1' }],
    ['ping with t', { type: 'ping', t: 1720000000 }, { kind: 'ping', t: 1720000000 }],
    ['ping with an object t', { type: 'ping', t: { n: [1] } }, { kind: 'ping', t: { n: [1] } }],
    ['ping with null t', { type: 'ping', t: null }, { kind: 'ping', t: null }],
    ['ping without t', { type: 'ping' }, { kind: 'ping' }],
    ['pong', { type: 'pong', t: 5 }, { kind: 'pong' }],
    ['closing with reason', { type: 'closing', reason: 'bye', delivered: [] }, { kind: 'closing', reason: 'bye' }],
    ['closing without reason', { type: 'closing' }, { kind: 'closing' }],
    [
      'subscribe keeps the raw members',
      { type: 'subscribe', id: 'sub-1', filter: { agent: 'codex' }, from: 'all', capture: 'none', extra: 1 },
      { kind: 'subscribe', subscribe: { id: 'sub-1', filter: { agent: 'codex' }, from: 'all', capture: 'none' } },
    ],
    ['subscribe with only an id', { type: 'subscribe', id: 's' }, { kind: 'subscribe', subscribe: { id: 's' } }],
  ])('parses %s', (_label, value, expected) => {
    expect(parse(value)).toEqual(expected);
  });

  it.each([
    ['subscribe without id', { type: 'subscribe', filter: {} }, 'invalid-filter'],
    ['subscribe with a numeric id', { type: 'subscribe', id: 1 }, 'invalid-filter'],
    ['unsubscribe without id', { type: 'unsubscribe' }, INVALID_FRAME],
    ['roster with a null id', { type: 'roster', id: null }, INVALID_FRAME],
  ])('refuses %s with code %s', (_label, value, code) => {
    const message = parse(value);
    expect(message.kind).toBe('invalid-frame');
    if (message.kind === 'invalid-frame') {
      expect(message.code).toBe(code);
      expect(message.id).toBeUndefined();
    }
  });

  it('covers every frame type of the protocol', () => {
    expect([...FRAME_TYPES].sort()).toEqual(
      ['closing', 'error', 'hello', 'ping', 'pong', 'replay-exhausted', 'roster', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed'],
    );
  });

  it('survives a __proto__ member without touching prototypes', () => {
    const message = parseClientMessage('{"__proto__":{"polluted":true},"type":"ping"}');
    expect(message).toEqual({ kind: 'ping' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('survives deep nesting and huge arrays', () => {
    const deep = `{"type":"ping","t":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    expect(parseClientMessage(deep).kind).toBe('ping');
    const wide = `{"type":"hello","versions":[${Array.from({ length: 100_000 }, () => '"9.9"').join(',')}],"role":"consumer"}`;
    expect(parseClientMessage(wide).kind).toBe('hello');
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(typeof parseClientMessage(text).kind).toBe('string');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary JSON shaped like frames', () => {
    const frame = fc.record(
      {
        type: fc.oneof(fc.constantFrom(...FRAME_TYPES), fc.jsonValue()),
        id: fc.jsonValue(),
        versions: fc.jsonValue(),
        role: fc.oneof(fc.constantFrom('emitter', 'consumer', 'both'), fc.jsonValue()),
        identity: fc.jsonValue(),
        capabilities: fc.jsonValue(),
        filter: fc.jsonValue(),
        from: fc.jsonValue(),
        capture: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(frame, (value) => {
        const message = parse(value);
        if (message.kind === 'subscribe') {
          expect(typeof parseSubscribe(message.subscribe, { maxPositions: 10 }).ok).toBe('boolean');
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hello', () => {
  const emitterHello = {
    type: 'hello',
    versions: ['0.2', '0.1'],
    role: 'emitter',
    identity: { agent: 'claude-code', instance: 'host-a/7c1f', card: null, extra: 'x' },
    capabilities: {
      emits: ['session', 'tool'],
      control: { accepts: ['control.attention.respond'], ack_window_ms: 10000 },
      futurething: { nested: [1, { deeper: true }] },
      experimental: {},
    },
  };

  it('keeps capabilities verbatim, unknown keys included', () => {
    expect(helloOf(emitterHello).capabilities).toEqual(emitterHello.capabilities);
  });

  it('keeps capabilities whose known keys have unexpected shapes', () => {
    const capabilities = { control: 'yes', emits: 7, filters: null };
    expect(helloOf({ ...emitterHello, capabilities }).capabilities).toEqual(capabilities);
  });

  it('reads versions, role and identity', () => {
    const hello = helloOf(emitterHello);
    expect(hello.versions).toEqual(['0.2', '0.1']);
    expect(hello.role).toBe('emitter');
    expect(hello.identity).toEqual({ agent: 'claude-code', instance: 'host-a/7c1f', card: null });
  });

  it.each([
    ['a consumer without identity', { type: 'hello', versions: ['0.1'], role: 'consumer' }],
    ['a consumer with identity', { type: 'hello', versions: ['0.1'], role: 'consumer', identity: { instance: 'tui' } }],
    ['an empty versions list', { type: 'hello', versions: [], role: 'consumer' }],
    ['a both-role party with an agent', { type: 'hello', versions: ['0.1'], role: 'both', identity: { agent: 'a' } }],
  ])('accepts %s, defaulting capabilities to {}', (_label, value) => {
    const hello = helloOf(value);
    expect(hello.capabilities).toEqual({});
  });

  it.each([
    ['missing versions', { role: 'consumer' }, /versions/],
    ['versions as a string', { versions: '0.1', role: 'consumer' }, /versions/],
    ['a non-string version', { versions: ['0.1', 1], role: 'consumer' }, /versions/],
    ['missing role', { versions: ['0.1'] }, /role/],
    ['an unknown role', { versions: ['0.1'], role: 'observer' }, /role/],
    ['an emitter without identity', { versions: ['0.1'], role: 'emitter' }, /identity\.agent/],
    ['an emitter without agent', { versions: ['0.1'], role: 'emitter', identity: { instance: 'x' } }, /identity\.agent/],
    ['both without agent', { versions: ['0.1'], role: 'both', identity: {} }, /identity\.agent/],
    ['an empty agent', { versions: ['0.1'], role: 'emitter', identity: { agent: '' } }, /identity\.agent/],
    ['a numeric agent', { versions: ['0.1'], role: 'consumer', identity: { agent: 5 } }, /identity\.agent/],
    ['a numeric instance', { versions: ['0.1'], role: 'consumer', identity: { instance: 5 } }, /identity\.instance/],
    ['identity as an array', { versions: ['0.1'], role: 'consumer', identity: ['a'] }, /identity/],
    ['capabilities as a string', { versions: ['0.1'], role: 'consumer', capabilities: 'all' }, /capabilities/],
    ['capabilities as null', { versions: ['0.1'], role: 'consumer', capabilities: null }, /capabilities/],
  ])('refuses %s as invalid-hello', (_label, members, detail) => {
    const message = parse({ type: 'hello', ...members });
    expect(message.kind).toBe('invalid-frame');
    if (message.kind === 'invalid-frame') {
      expect(message.code).toBe(INVALID_HELLO);
      expect(message.detail).toMatch(detail);
    }
  });
});

describe('selectVersion', () => {
  it.each([
    [['0.1'], ['0.1'], '0.1'],
    [['0.2', '0.1'], ['0.1'], '0.1'],
    [['0.1', '0.2'], ['0.2', '0.1'], '0.1'],
    [['0.2', '0.1'], ['0.1', '0.2'], '0.2'],
    [['1.0'], ['0.1'], undefined],
    [[], ['0.1'], undefined],
    [['0.1 '], ['0.1'], undefined],
  ])('picks from offered %o and supported %o: %s', (offered, supported, chosen) => {
    expect(selectVersion(offered, supported)).toBe(chosen);
  });

  it('picks the relay version from a typical offer', () => {
    expect(selectVersion(['0.1'], SUPPORTED_VERSIONS)).toBe('0.1');
  });
});

describe('parseSubscribe', () => {
  const limits: SubscribeLimits = { maxPositions: 2 };

  function accepted(raw: unknown, custom: SubscribeLimits = limits) {
    const result = parseSubscribe(raw, custom);
    if (!result.ok) throw new Error(`subscribe unexpectedly refused: ${JSON.stringify(result.error)}`);
    return result;
  }

  it('accepts the full frame and compiles its filter', () => {
    const result = accepted({
      id: 'sub-1',
      filter: { type: ['attention.*'], severity: { gte: 'notice' } },
      from: [{ session: 's_8f2c', epoch: 3, seq: 187 }],
      capture: 'metadata',
    });
    expect(result.id).toBe('sub-1');
    expect(result.capture).toBe('metadata');
    expect(result.from).toEqual([{ session: 's_8f2c', epoch: 3, seq: 187 }]);
    expect(result.matches({ type: 'attention.requested', severity: 'warning' })).toBe(true);
    expect(result.matches({ type: 'attention.requested' })).toBe(false);
  });

  it('reads an absent filter as {} and leaves capture and from unset', () => {
    const result = accepted({ id: 'sub-2' });
    expect(result.filter).toEqual({});
    expect(result.capture).toBeUndefined();
    expect(result.from).toBeUndefined();
    expect(result.matches({ type: 'agent.heartbeat' })).toBe(true);
  });

  it('accepts replay-all by default', () => {
    expect(accepted({ id: 's', from: 'all' }).from).toBe('all');
  });

  it('accepts the parsed member of a subscribe message', () => {
    const message = parseClientMessage('{"type":"subscribe","id":"x","filter":{"session":"s1"}}');
    if (message.kind !== 'subscribe') throw new Error('expected subscribe');
    expect(accepted(message.subscribe).filter).toEqual({ session: 's1' });
  });

  it.each([
    ['a non-object', 'subscribe', 'invalid-filter', undefined],
    ['a missing id', { filter: {} }, 'invalid-filter', undefined],
    ['a null filter', { id: 'a', filter: null }, 'invalid-filter', 'a'],
    ['a string filter', { id: 'a', filter: 'type = x' }, 'invalid-filter', 'a'],
    ['an illegal filter key', { id: 'a', filter: { seq: 1 } }, 'invalid-filter', 'a'],
    ['an unknown capture ceiling', { id: 'a', capture: 'everything' }, 'invalid-filter', 'a'],
    ['a null capture ceiling', { id: 'a', capture: null }, 'invalid-filter', 'a'],
    ['a malformed from', { id: 'a', from: { session: 's' } }, 'invalid-filter', 'a'],
    ['a null from', { id: 'a', from: null }, 'invalid-filter', 'a'],
    ['too many positions', {
      id: 'a',
      from: [{ session: 'a', epoch: 0, seq: 0 }, { session: 'b', epoch: 0, seq: 0 }, { session: 'c', epoch: 0, seq: 0 }],
    }, 'limit-exceeded', 'a'],
  ])('refuses %s with %s', (_label, raw, code, id) => {
    const result = parseSubscribe(raw, limits);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.type).toBe('error');
    expect(result.error.code).toBe(code);
    expect(result.error.id).toBe(id);
    expect(SUBSCRIBE_ERROR_CODES).toContain(result.error.code);
    expect(result.error.detail).not.toBe('');
  });

  it('refuses replay-all as invalid-filter where it is not implemented', () => {
    const result = parseSubscribe({ id: 'a', from: 'all' }, { maxPositions: 2, replayAll: false });
    expect(result.ok ? undefined : result.error.code).toBe('invalid-filter');
  });

  it('names the limit that was hit', () => {
    const result = parseSubscribe({ id: 'a', from: [{}, {}, {}] }, limits);
    expect(result.ok ? undefined : result.error.detail).toMatch(/maxPositions/);
  });
});

describe('outbound frames', () => {
  it.each([
    ['helloReply', helloReply('0.1', { roster: {} }), { type: 'hello', versions: ['0.1'], role: 'both', capabilities: { roster: {} } }],
    [
      'helloReply with identity',
      helloReply('0.1', {}, { agent: 'relay' }),
      { type: 'hello', versions: ['0.1'], role: 'both', identity: { agent: 'relay' }, capabilities: {} },
    ],
    ['errorFrame with only a code', errorFrame({ code: 'hello-required' }), { type: 'error', code: 'hello-required' }],
    [
      'errorFrame for a version mismatch',
      errorFrame({ code: 'version-unsupported', versions: ['0.1'], detail: 'no common version' }),
      { type: 'error', code: 'version-unsupported', versions: ['0.1'], detail: 'no common version' },
    ],
    [
      'errorFrame for a refused command',
      errorFrame({ code: 'no-route', cause: '01JX' }),
      { type: 'error', code: 'no-route', cause: '01JX' },
    ],
    [
      'errorFrame for a refused subscribe',
      errorFrame({ code: 'unauthorized', id: 'sub-1', detail: 'emitter role' }),
      { type: 'error', code: 'unauthorized', id: 'sub-1', detail: 'emitter role' },
    ],
    ['subscribed', subscribed('sub-1'), { type: 'subscribed', id: 'sub-1' }],
    ['unsubscribed', unsubscribed('sub-1'), { type: 'unsubscribed', id: 'sub-1' }],
    [
      'replayExhausted',
      replayExhausted('sub-1', 's1', { epoch: 2, seq: 40 }),
      { type: 'replay-exhausted', sub: 'sub-1', session: 's1', earliest: { epoch: 2, seq: 40 } },
    ],
    [
      'closing',
      closing('shutdown', [{ sub: 'sub-1', session: 's1', epoch: 0, seq: 9 }]),
      { type: 'closing', reason: 'shutdown', delivered: [{ sub: 'sub-1', session: 's1', epoch: 0, seq: 9 }] },
    ],
    ['pong with t', pong({ n: 1 }), { type: 'pong', t: { n: 1 } }],
    ['pong with null t', pong(null), { type: 'pong', t: null }],
    ['pong without t', pong(), { type: 'pong' }],
    [
      'rosterReply',
      rosterReply('r-1', [
        { session: 's1', agent: 'claude-code', instance: 'h/1', control: { accepts: ['control.x'] }, emits: ['tool'] },
        { session: 's1' },
      ]),
      {
        type: 'roster',
        id: 'r-1',
        entries: [
          { session: 's1', agent: 'claude-code', instance: 'h/1', control: { accepts: ['control.x'] }, emits: ['tool'] },
          { session: 's1' },
        ],
      },
    ],
    ['rosterReply with no claims', rosterReply('r-2', []), { type: 'roster', id: 'r-2', entries: [] }],
  ])('%s', (_label, frame, expected) => {
    expect(frame).toStrictEqual(expected);
  });

  it('never serializes an absent member as null or undefined', () => {
    const text = JSON.stringify(errorFrame({ code: 'x', id: undefined, detail: undefined }));
    expect(text).toBe('{"type":"error","code":"x"}');
    expect(Object.keys(rosterReply('r', [{ session: 's', agent: undefined }]).entries[0] ?? {})).toEqual(['session']);
  });

  it('round-trips outbound ping-shaped frames through the parser', () => {
    expect(parseClientMessage(JSON.stringify(pong(3)))).toEqual({ kind: 'pong' });
  });
});
