/**
 * Hostile input against the shared stack, property-based (fast-check) and corpus-based: every
 * entry point answers with its documented refusal (400 / 413 / in-band error / a close the
 * gateway owns), never a 5xx and never silence, and after each burst a well-behaved client on
 * another connection still works (ping/pong, a POST, a delivery).
 */
import fc from 'fast-check';
import { describe, expect, inject, it, vi } from 'vitest';
import { LOCAL_TENANT } from '../../local/stack.ts';
import { validateEnvelope } from '../../src/protocol/envelope.ts';
import { isCommandType } from '../../src/protocol/type-grammar.ts';
import { eventLog, mintId, ndjson, postEvents, sessionEvent, storedEvents, storedTexts, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType, waitForCount, untilClaimed } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';

// Property runs are many round trips each; bounded, but slower than the default allows on a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

/** A well-behaved client on a fresh connection: ping/pong, a subscription, a POST, its delivery. */
async function stillServing(): Promise<void> {
  const session = uniqueName('healthy');
  const client = await helloSocket();
  client.send({ type: 'ping', t: 'ok' });
  expect(await client.next(isType('pong'))).toEqual({ type: 'pong', t: 'ok' });
  client.send({ type: 'subscribe', id: 'healthy', filter: { session } });
  await client.next(isType('subscribed'));
  const event = sessionEvent(session, 0);
  expect((await postEvents(JSON.stringify(event))).status).toBe(202);
  await client.next((frame) => frame.id === event.id);
  await client.close();
}

async function postRaw(body: string | Uint8Array, contentType = 'application/json'): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${inject('baseUrl')}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${inject('devToken')}`, 'aep-version': '0.1', 'content-type': contentType },
    body,
  });
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { unparsable: text.slice(0, 200) };
  }
  return { status: response.status, body: parsed };
}

/** Sends one text message as fragments, each within API Gateway's 32 KiB frame quota. */
function sendFragmented(client: TestSocket, text: string | Buffer, fragmentBytes = 16 * 1024): void {
  const data = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  for (let offset = 0; offset < data.length; offset += fragmentBytes) {
    client.socket.send(data.subarray(offset, offset + fragmentBytes), { binary: false, fin: offset + fragmentBytes >= data.length });
  }
}

/**
 * GET /stream, retried once when the request dies on a reset socket before any answer: under
 * load the client can reuse a keep-alive connection the server has just closed (a transport
 * race, not a relay answer; GET is idempotent).
 */
async function openStreamOnce(query: Record<string, string>): Promise<Awaited<ReturnType<typeof openStream>>> {
  try {
    return await openStream(query);
  } catch (error) {
    if (!(error instanceof TypeError && String((error.cause as { code?: unknown } | undefined)?.code) === 'ECONNRESET')) throw error;
    return openStream(query);
  }
}

const answerTo = (id: string) => (frame: Frame) => frame.id === id && (frame.type === 'error' || frame.type === 'subscribed');

/** The raw text of a stream until `until` holds (the SSE client parses; header injection needs the bytes). */
async function rawStream(query: Record<string, string>, until: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(`${inject('baseUrl')}/stream?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${inject('devToken')}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    while (!until(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // Aborted at the deadline: the assertion below reports what arrived.
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  expect(until(text), `stream did not deliver what was expected within ${timeoutMs} ms:\n${JSON.stringify(text).slice(0, 2000)}`).toBe(true);
  return text;
}

// ---- Arbitraries -------------------------------------------------------------------------

/** Objects near a valid event: every member drawn from valid values and hostile ones. */
const eventLike = fc.record(
  {
    aep: fc.oneof(fc.constant('0.1'), fc.constant('1.0'), fc.string(), fc.integer()),
    id: fc.oneof(fc.constant('x').map(() => mintId()), fc.string(), fc.integer(), fc.constant(null)),
    type: fc.oneof(fc.constantFrom('progress.status', 'tool.completed', 'agent.presence', 'control.cancel', 'x.acme.tool.ran', 'hello', 'a..b', '.x', 'X.Y'), fc.string()),
    time: fc.oneof(fc.constant('2026-07-03T10:00:00Z'), fc.constant('2026-13-45T99:99:99Z'), fc.string()),
    source: fc.oneof(fc.constant('aep://h/agent/a'), fc.constant('not a uri'), fc.string()),
    agent: fc.oneof(fc.constant('a'), fc.string(), fc.constant([])),
    session: fc.oneof(fc.constant('x').map(() => uniqueName('prop')), fc.string(), fc.constant(null), fc.constant({})),
    seq: fc.oneof(fc.nat(), fc.integer(), fc.double(), fc.constant(2 ** 53), fc.constant('1')),
    epoch: fc.oneof(fc.nat(), fc.integer({ min: -5, max: -1 }), fc.double()),
    severity: fc.oneof(fc.constantFrom('debug', 'info', 'notice', 'critical', 'loud', ''), fc.integer()),
    capture: fc.constantFrom('none', 'metadata', 'redacted', 'full', 'secret'),
    data: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

const validPosition = fc.record({ session: fc.string({ minLength: 1, maxLength: 8 }), epoch: fc.nat(5), seq: fc.nat(100) });
const badCounter = fc.oneof(fc.integer({ min: -1000, max: -1 }), fc.double({ noInteger: true }), fc.string(), fc.constant(null), fc.boolean(), fc.constant(2 ** 53), fc.constant([]), fc.constant({}));
const badPosition = fc.oneof(
  fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.boolean(), fc.array(fc.nat(), { maxLength: 3 })),
  fc.record({ epoch: fc.nat(), seq: fc.nat() }),
  fc.record({ session: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null), fc.constant(['s']), fc.constant({})), epoch: fc.nat(), seq: fc.nat() }),
  fc.record({ session: fc.string({ minLength: 1 }), epoch: badCounter, seq: fc.nat() }),
  fc.record({ session: fc.string({ minLength: 1 }), epoch: fc.nat(), seq: badCounter }),
  fc.record({ session: fc.string({ minLength: 1 }), seq: fc.nat() }),
  fc.record({ session: fc.string({ minLength: 1 }), epoch: fc.nat() }),
);
/** A `from` member of any bad shape, with the refusal it must get. */
const badFrom: fc.Arbitrary<{ from: unknown; code: 'invalid-filter' | 'limit-exceeded' }> = fc.oneof(
  fc
    .oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.string().filter((text) => text !== 'all'), fc.constantFrom('ALL', 'all ', ' all'), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }))
    .map((from) => ({ from, code: 'invalid-filter' as const })),
  fc
    .tuple(fc.array(validPosition, { maxLength: 4 }), badPosition, fc.array(validPosition, { maxLength: 4 }))
    .map(([before, bad, after]) => ({ from: [...before, bad, ...after], code: 'invalid-filter' as const })),
  fc.integer({ min: 257, max: 300 }).map((length) => ({ from: Array.from({ length }, (_, index) => ({ session: `s${index}`, epoch: 0, seq: 0 })), code: 'limit-exceeded' as const })),
);

const scalar = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean());
const UNFILTERABLE = ['time', 'seq', 'aep', 'traceparent', 'data'];
const FILTERABLE = new Set(['id', 'type', 'subject', 'source', 'agent', 'session', 'run', 'step', 'epoch', 'cause', 'severity', 'capture']);
/** A filter that is illegal by construction (AEP-0003 §6.1-6.2), possibly next to legal members. */
const badFilter: fc.Arbitrary<unknown> = fc.oneof(
  fc.oneof(fc.array(scalar, { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null), fc.boolean()),
  fc.tuple(
    fc.oneof(
      fc.constantFrom(...UNFILTERABLE).map((key) => [key, 'x'] as const),
      fc.string({ minLength: 1, maxLength: 30 }).filter((key) => !/^[a-z0-9]{1,20}$/.test(key) && !FILTERABLE.has(key)).map((key) => [key, 'x'] as const),
      fc.constantFrom('*', '.*', '*.x', 'a*', 'a.*.*', 'tool.*x', '**', 'a.b*', '*.*').map((pattern) => ['type', pattern] as const),
      fc.constantFrom('session', 'agent', 'source', 'run').map((key) => [key, 'x*'] as const),
      fc.constantFrom('session', 'type', 'agent').map((key) => [key, { eq: 'x' }] as const),
      fc.constantFrom('session', 'type').map((key) => [key, []] as const),
      fc.constantFrom('session', 'type').map((key) => [key, [['nested']]] as const),
      fc.constantFrom('session', 'epoch').map((key) => [key, null] as const),
      fc.constantFrom(1.5, 2 ** 60, -(2 ** 60)).map((value) => ['epoch', value] as const),
      fc.constantFrom({ gt: 'info' }, {}, { gte: 'loud' }, { gte: 'error', lte: 'info' }, { lte: 3 }).map((value) => ['severity', value] as const),
      fc.constantFrom('loud', 'INFO', '').map((value) => ['severity', value] as const),
      fc.constantFrom('everything', 'secret').map((value) => ['capture', value] as const),
    ),
    fc.constantFrom({}, { agent: 'a' }, { type: 'tool.*' }),
  ).map(([[key, value], legal]) => ({ ...legal, [key]: value })),
);

describe('hostile input: POST /events', () => {
  it('answers random JSON values and near-events with 202 when valid, else 400 invalid-event (403 for commands), never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(eventLike, fc.jsonValue(), eventLike.map((event) => [event])), async (value) => {
        const text = JSON.stringify(value) ?? 'null';
        const { status, body } = await postRaw(text);
        const verdict = validateEnvelope(JSON.parse(text));
        if (!verdict.ok) {
          expect(status, text).toBe(400);
          expect(body.error).toBe('invalid-event');
        } else if (isCommandType(verdict.event.type)) {
          expect(status, text).toBe(403);
          expect(body.error).toBe('unauthorized');
        } else {
          expect(status, `${text} -> ${JSON.stringify(body)}`).toBe(202);
        }
      }),
      { numRuns: 80 },
    );
    await stillServing();
  });

  it('answers arbitrary text and bytes, as one event and as NDJSON batches, with a 4xx, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 300 }), fc.array(fc.oneof(fc.string(), fc.constant(JSON.stringify(sessionEvent('bytes', 0)))), { maxLength: 5 }).map((lines) => lines.join('\n'))),
        fc.constantFrom('application/json', 'application/x-ndjson', 'application/json; charset=utf-8', 'text/plain', ''),
        async (body, contentType) => {
          const { status, body: answer } = await postRaw(body, contentType);
          expect(status, JSON.stringify(answer)).toBeLessThan(500);
          expect([202, 400, 413, 415], JSON.stringify(answer)).toContain(status);
          if (status === 400) expect(answer.error).toBe('invalid-event');
        },
      ),
      { numRuns: 80 },
    );
    await stillServing();
  });

  it('refuses a corpus of malformed JSON with 400 invalid-event naming the line, never 5xx', async () => {
    const valid = JSON.stringify(sessionEvent(uniqueName('corpus'), 0));
    const corpus = [
      '', ' ', '\n', '{', '}', '[', '{"a":', '{"aep":"0.1",}', "{'aep':'0.1'}", '{"aep":0.1e}', 'NaN', 'Infinity', '-', '"unterminated',
      '{"aep":"0.1"}{"aep":"0.1"}', `${valid}garbage`, `\uFEFF${valid}`, '/* comment */ {}', '{"a":1,"a":2}', '{"__proto__":{"polluted":true}}',
      '{"s":"\\ud800"}', '{"s":"\\u00"}', '{"s":"\u0000"}', `[${valid}]`, 'null', 'true', '12345678901234567890123456789', '1e999999',
      `{"aep":"0.1","id":"x","data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      '['.repeat(10_000) + ']'.repeat(10_000),
      '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000),
      '['.repeat(100_000),
    ];
    for (const text of corpus) {
      const { status, body } = await postRaw(text);
      expect(status, `${JSON.stringify(text.slice(0, 80))} -> ${JSON.stringify(body)}`).toBe(400);
      expect(body.error).toBe('invalid-event');
    }
    // NDJSON: the first bad line is named, and nothing of the batch is stored.
    const session = uniqueName('corpus-batch');
    const good = [sessionEvent(session, 0), sessionEvent(session, 1)];
    for (const [index, bad] of ['{', '', '\r', '   ', '{"aep":"0.1"}', '["x"]'].entries()) {
      const body = `${JSON.stringify(good[0])}\n${bad}\n${JSON.stringify(good[1])}\n`;
      const answer = await postRaw(body, 'application/x-ndjson');
      expect(answer.status, `case ${index}`).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid-event', line: 1 });
    }
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
    await stillServing();
  });

  it('stores an event nested 10k levels deep in data and replays it byte-identical, or refuses it; never 5xx', async () => {
    const session = uniqueName('deep');
    for (const [index, nested] of [
      `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
      `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
      `${'[{"a":'.repeat(5_000)}1${'}]'.repeat(5_000)}`,
    ].entries()) {
      const watcher = await helloSocket();
      const raws: string[] = [];
      watcher.socket.on('message', (data: Buffer) => raws.push(data.toString('utf8')));
      watcher.send({ type: 'subscribe', id: 'deep', filter: { session } });
      await watcher.next(isType('subscribed'));
      const event = sessionEvent(session, index);
      const text = `${JSON.stringify(event).slice(0, -1)},"data":{"deep":${nested}}}`;
      const { status, body } = await postRaw(text);
      expect([202, 400, 413], JSON.stringify(body)).toContain(status);
      if (status === 202) {
        const replayed = await storedTexts(eventLog(), LOCAL_TENANT, session);
        expect(replayed).toContain(text);
        await watcher.next((frame) => frame.id === event.id);
        // Byte-identical on the wire (re-serializing a 10k-deep value is itself a stack hazard for the checker).
        expect(raws).toContain(text);
      }
      await watcher.close();
    }
    await stillServing();
  });

  it('handles bytes that are not UTF-8: a 4xx, or stored as valid JSON text that replays; never 5xx', async () => {
    const session = uniqueName('utf8');
    const valid = Buffer.from(JSON.stringify(sessionEvent(session, 0, { data: { note: 'MARK' } })), 'utf8');
    const at = valid.indexOf('MARK');
    const invalidSequences = [[0xff], [0xfe, 0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0xbc], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80]];
    for (const [index, bytes] of invalidSequences.entries()) {
      const event = sessionEvent(session, index + 1, { data: { note: 'MARK' } });
      const source = Buffer.from(JSON.stringify(event), 'utf8');
      const mark = source.indexOf('MARK');
      const body = Buffer.concat([source.subarray(0, mark), Buffer.from(bytes), source.subarray(mark + 4)]);
      for (const contentType of ['application/json', 'application/x-ndjson']) {
        const { status, body: answer } = await postRaw(body, contentType);
        expect([202, 400], JSON.stringify(answer)).toContain(status);
      }
      // Outside any string: never valid JSON.
      const broken = Buffer.concat([valid.subarray(0, at - 1), Buffer.from(bytes), valid.subarray(at - 1)]);
      expect((await postRaw(broken)).status).toBe(400);
    }
    // Whatever was stored replays as valid JSON (API Gateway hands text bodies over as UTF-8 strings).
    for (const raw of await storedTexts(eventLog(), LOCAL_TENANT, session)) expect(() => JSON.parse(raw)).not.toThrow();
    // A WebSocket text frame that is not UTF-8 is a protocol error the gateway closes (1007), or an in-band refusal.
    const client = await helloSocket();
    client.socket.send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { binary: false });
    const outcome = await Promise.race([client.closed.then((closed) => ({ closed })), client.next(isType('error')).then((error) => ({ error }))]);
    if ('closed' in outcome) expect(outcome.closed.code).toBe(1007);
    else expect(outcome.error.code).toBe('invalid-frame');
    client.socket.terminate();
    await stillServing();
  });
});

describe('hostile input: sizes', () => {
  it('answers oversize bodies, batches and events with 413 and the limit hit', async () => {
    const session = uniqueName('big');
    const bigBody = await postRaw(JSON.stringify(sessionEvent(session, 0, { data: { blob: 'x'.repeat(1024 * 1024) } })));
    expect(bigBody).toMatchObject({ status: 413, body: { error: 'payload-too-large' } });
    const bigEvent = await postRaw(JSON.stringify(sessionEvent(session, 0, { data: { blob: 'x'.repeat(121 * 1024) } })));
    expect(bigEvent).toMatchObject({ status: 413, body: { error: 'event-too-large' } });
    const manyEvents = await postRaw(ndjson(Array.from({ length: 1001 }, (_, seq) => sessionEvent(session, seq))), 'application/x-ndjson');
    expect(manyEvents).toMatchObject({ status: 413, body: { error: 'too-many-events' } });
    // Over the gateway's 10 MB payload limit: refused before any handler runs.
    const huge = await postRaw(Buffer.alloc(11 * 1024 * 1024, 0x20));
    expect(huge.status).toBe(413);
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
    await stillServing();
  });

  it('closes with 1009 on a frame over 32 KiB or a message over 128 KiB, and refuses an event over 120 KiB in-band', async () => {
    const oneFrame = await helloSocket();
    oneFrame.socket.send(JSON.stringify({ type: 'ping', t: 'x'.repeat(40 * 1024) }));
    expect((await oneFrame.closed).code).toBe(1009);

    const fragmented = await helloSocket();
    sendFragmented(fragmented, JSON.stringify({ type: 'ping', t: 'x'.repeat(130 * 1024) }));
    expect((await fragmented.closed).code).toBe(1009);

    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } });
    const event = sessionEvent(uniqueName('big-ws'), 0, { data: { blob: 'x'.repeat(121 * 1024) } });
    sendFragmented(emitter, JSON.stringify(event));
    expect(await emitter.next(isType('error'))).toMatchObject({ code: 'event-too-large', cause: event.id });
    emitter.send({ type: 'ping', t: 'after' });
    await emitter.next(isType('pong'));
    await emitter.close();
    await stillServing();
  });

  it('refuses binary frames in-band with invalid-frame and keeps the connection', async () => {
    const client = await helloSocket();
    const frames = [Buffer.from(JSON.stringify(sessionEvent('bin', 0))), Buffer.from([0, 1, 2, 255]), Buffer.alloc(0)];
    for (const bytes of frames) client.socket.send(bytes, { binary: true });
    const errors = await waitForCount(client, isType('error'), frames.length);
    expect(errors.map((frame) => frame.code)).toEqual(frames.map(() => 'invalid-frame'));
    client.send({ type: 'ping', t: 1 });
    await client.next(isType('pong'));
    await client.close();
    await stillServing();
  });
});

describe('hostile input: subscriptions', () => {
  it('refuses a from of every bad shape: in-band invalid-filter or limit-exceeded on the socket, 400 on SSE', async () => {
    const client = await helloSocket();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(badFrom, async ({ from, code }) => {
        const id = `from-${run++}`;
        client.send({ type: 'subscribe', id, filter: {}, from });
        expect(await client.next(answerTo(id))).toMatchObject({ type: 'error', id, code });
      }),
      { numRuns: 40 },
    );
    // The refused subscriptions left the connection and its other subscriptions alone.
    client.send({ type: 'subscribe', id: 'good', filter: { session: uniqueName('after-bad-from') } });
    expect(await client.next(answerTo('good'))).toMatchObject({ type: 'subscribed' });
    await client.close();

    await fc.assert(
      fc.asyncProperty(badFrom.filter(({ code }) => code === 'invalid-filter'), async ({ from }) => {
        const stream = await openStreamOnce({ from: JSON.stringify(from) ?? 'null', live: '0' });
        expect(stream.status).toBe(400);
        expect(stream.body).toMatchObject({ error: 'invalid-filter' });
      }),
      { numRuns: 30 },
    );
    // Over the position limit on SSE too. Written with only the quotes escaped, so 257 positions fit a URL.
    const tooMany = JSON.stringify(Array.from({ length: 257 }, () => ({ session: 's', epoch: 0, seq: 0 })));
    const overLimit = await fetch(`${inject('baseUrl')}/stream?live=0&from=${tooMany}`, { headers: { authorization: `Bearer ${inject('devToken')}` } });
    expect(overLimit.status).toBe(400);
    expect(await overLimit.json()).toMatchObject({ error: 'limit-exceeded' });
    await stillServing();
  });

  it('refuses filters with illegal keys, values and patterns with invalid-filter, on the socket and on SSE', async () => {
    const client = await helloSocket();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(badFilter, async (filter) => {
        const id = `filter-${run++}`;
        client.send({ type: 'subscribe', id, filter });
        expect(await client.next(answerTo(id)), JSON.stringify(filter)).toMatchObject({ type: 'error', id, code: 'invalid-filter' });
        const stream = await openStreamOnce({ filter: JSON.stringify(filter), live: '0' });
        expect(stream.status, JSON.stringify(filter)).toBe(400);
        expect(stream.body).toMatchObject({ error: 'invalid-filter' });
      }),
      { numRuns: 40 },
    );
    expect(client.all(isType('subscribed'))).toEqual([]);
    client.send({ type: 'ping', t: 'alive' });
    await client.next(isType('pong'));
    await client.close();
    await stillServing();
  });
});

describe('hostile input: forged identity', () => {
  it('refuses commands and events whose agent is not one the token is bound to, storing and routing nothing', async () => {
    const tenant = uniqueName('forge');
    const dashToken = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['dash'] });
    const victimToken = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['victim'] });
    const session = uniqueName('victim-session');
    const victim = await helloSocket({ role: 'both', identity: { agent: 'victim' }, capabilities: { control: { accepts: ['control.cancel', 'control.pause'] } } }, { token: victimToken });
    victim.send(sessionEvent(session, 0, { agent: 'victim', source: 'aep://h/agent/victim' }));
    await untilClaimed({ token: victimToken }, session);
    const dash = await helloSocket({ role: 'both', identity: { agent: 'dash' } }, { token: dashToken });

    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 12 }).filter((agent) => agent !== 'dash'),
        fc.constantFrom('control.cancel', 'control.pause'),
        fc.boolean(),
        async (agent, type, forgeSource) => {
          const command = { aep: '0.1', id: mintId(), type, time: new Date().toISOString(), source: forgeSource ? 'aep://h/agent/victim' : `aep://h/agent/${encodeURIComponent(agent)}`, agent, session, data: { scope: 'session' } };
          dash.send(command);
          expect(await dash.next((frame) => frame.type === 'error' && frame.cause === command.id)).toMatchObject({ code: 'unauthorized' });
        },
      ),
      { numRuns: 25 },
    );
    // An event forged the same way, on the socket and over HTTP.
    const forged = sessionEvent(session, 1, { agent: 'victim', source: 'aep://h/agent/victim' });
    dash.send(forged);
    expect(await dash.next((frame) => frame.cause === forged.id)).toMatchObject({ type: 'error', code: 'unauthorized' });
    const overHttp = await postEvents(JSON.stringify(forged), { token: dashToken });
    expect(overHttp.status).toBe(403);
    expect(await overHttp.json()).toMatchObject({ error: 'unauthorized' });
    // Nothing reached the victim, nothing was stored beyond its own event.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(victim.frames.filter((frame) => typeof frame.type === 'string' && frame.type.startsWith('control.'))).toEqual([]);
    expect((await storedEvents(tenant, session)).map((event) => event.agent)).toEqual(['victim']);
    await victim.close();
    await dash.close();
    await stillServing();
  });
});

describe('hostile input: identifiers', () => {
  const hostileSessions = [
    '../../etc/passwd', '..\\..\\windows\\system32', 'a/b', 'a%2Fb', '%2e%2e%2f', './x', 'x/', '/', '.', '..',
    'nul\u0000byte', 'cr\rlf\n', 'tab\there', '\u2028\u2029', 'T#local#S#x', 'S#x', '#', ':', 'a:0:1', '🙂', ' ', 'null', '<script>', '${x}', "'; DROP TABLE",
  ];

  it('stores and replays sessions with path and control characters exactly, each isolated from look-alikes', async () => {
    // A tenant of its own, so the reads and fan-out below see only this test's sessions.
    const tenant = uniqueName('paths');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const suffix = uniqueName('');
    const sessions = hostileSessions.map((session) => `${session}${suffix}`);
    const watcher = await helloSocket({}, { token });
    watcher.send({ type: 'subscribe', id: 'hostile', filter: { session: sessions } });
    await watcher.next(isType('subscribed'));
    const events = sessions.map((session) => sessionEvent(session, 1, { source: 'aep://test/agent/tester' }));
    const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson', token });
    expect(response.status).toBe(202);
    const log = eventLog({ replayBuffer: 100 });
    const storedRaw = (session: string) => storedTexts(log, tenant, session);
    for (const [index, session] of sessions.entries()) {
      const event = events[index] as Record<string, unknown>;
      // In the log under exactly that name, and only there (byte-identical text).
      expect(await storedRaw(session), JSON.stringify(session)).toEqual([JSON.stringify(event)]);
      // Live, to a subscription naming it.
      const delivered = await watcher.next((frame) => frame.id === event.id);
      expect(delivered.session).toBe(session);
    }
    // Replay by position on the socket, and on SSE (from carries any string as JSON).
    const replayer = await helloSocket({}, { token });
    replayer.send({ type: 'subscribe', id: 'replay', filter: { session: sessions }, from: sessions.map((session) => ({ session, epoch: 0, seq: 0 })) });
    for (const event of events) expect((await replayer.next((frame) => frame.id === event.id)).session).toBe(event.session);
    const sse = await openStream({ from: JSON.stringify(sessions.map((session) => ({ session, epoch: 0, seq: 0 }))), live: '0' }, { token });
    await sse.ended;
    expect(new Set(sse.messages().map((message) => message.json.session))).toEqual(new Set(sessions));
    // Look-alikes (what path normalization or URL decoding would make of them) hold nothing.
    for (const lookAlike of ['x', 'etc/passwd', 'etc%2Fpasswd', 'windows/system32', 'b', 'a', 'nulbyte', 'crlf', '../x']) {
      expect(await storedRaw(`${lookAlike}${suffix}`), lookAlike).toEqual([]);
    }
    // Sessions are never paths: the relay's tenant registry lists exactly the names posted.
    expect(new Set((await log.listSessions(tenant, 100)).items)).toEqual(new Set(sessions));
    await watcher.close();
    await replayer.close();
    await stillServing();
  });

  it('stores any random session string exactly (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), async (name) => {
        const session = `${name}${uniqueName('')}`;
        const event = sessionEvent(session, 0, { source: 'aep://test/agent/tester' });
        expect((await postEvents(JSON.stringify(event))).status).toBe(202);
        expect((await storedEvents(LOCAL_TENANT, session)).map((stored) => stored.session)).toEqual([session]);
      }),
      { numRuns: 25 },
    );
    await stillServing();
  });

  it('refuses identifiers too long for the store\'s keys with 400 / in-band refusals, never a 503 that asks for a retry', async () => {
    const long = (length: number) => 'l'.repeat(length);
    for (const overrides of [{ session: long(3000) }, { id: long(1100) }, { agent: long(3000), source: 'aep://h/agent/long' }]) {
      const event = sessionEvent(uniqueName('long'), 0, overrides);
      const { status, body } = await postRaw(JSON.stringify(event));
      expect(status, `${Object.keys(overrides).join()}: ${JSON.stringify(body)}`).toBe(400);
      expect(body).toMatchObject({ error: 'invalid-event' });
      // The same on the socket, in-band.
      const emitter = await helloSocket({ role: 'emitter', identity: { agent: String(event.agent) } });
      sendFragmented(emitter, JSON.stringify(event));
      expect(await emitter.next(isType('error'))).toMatchObject({ code: 'invalid-event', cause: event.id });
      await emitter.close();
    }
    const subscriber = await helloSocket();
    for (const [id, request] of [
      ['long-session', { filter: { session: long(3000) } }],
      ['long-from', { filter: {}, from: [{ session: long(3000), epoch: 0, seq: 0 }] }],
      [long(2000), { filter: {} }],
    ] as const) {
      subscriber.send({ type: 'subscribe', id, ...request });
      expect(await subscriber.next(answerTo(id))).toMatchObject({ type: 'error', code: 'limit-exceeded' });
    }
    for (const [name, value] of [['filter', JSON.stringify({ session: long(3000) })], ['from', JSON.stringify([{ session: long(3000), epoch: 0, seq: 0 }])]] as const) {
      const stream = await openStreamOnce({ [name]: value, live: '0' });
      expect(stream.status).toBe(400);
      expect(stream.body).toMatchObject({ error: 'limit-exceeded' });
    }
    subscriber.send({ type: 'ping', t: 'alive' });
    await subscriber.next(isType('pong'));
    await subscriber.close();
    await stillServing();
  });

  it('sends no id: line and no injected field for a session with CR/LF, in replay and live (SSE)', async () => {
    const suffix = uniqueName('');
    const injections = [`evil${suffix}\r\nid: injected\r\nevent: pwned\r\ndata: {"pwned":true}`, `evil${suffix}\nretry: 1`, `evil${suffix}\rid: 0`];
    for (const session of injections) {
      const replayed = sessionEvent(session, 1, { source: 'aep://test/agent/tester' });
      expect((await postEvents(JSON.stringify(replayed))).status).toBe(202);
      const live = sessionEvent(session, 2, { source: 'aep://test/agent/tester' });
      let livePosted: Promise<Response> | undefined;
      const text = await rawStream(
        { filter: JSON.stringify({ session }), from: JSON.stringify([{ session, epoch: 0, seq: 0 }]) },
        (received) => {
          // Once the replayed event is through, the live one is posted (once).
          if (livePosted === undefined && received.includes(String(replayed.id))) livePosted = postEvents(JSON.stringify(live));
          return received.includes(String(live.id)) && received.endsWith('\n\n');
        },
      );
      expect((await livePosted)?.status).toBe(202);
      const lines = text.split(/\r\n|\r|\n/);
      // Every line is a comment, a field this stream uses, or the blank line ending a message.
      for (const line of lines) expect(line === '' || line.startsWith(':') || line.startsWith('event: ') || line.startsWith('data: '), JSON.stringify(line)).toBe(true);
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
      // At least once: the replayed event may come again live around the replay handoff.
      expect([...new Set(data.map((event) => event.id))]).toEqual([replayed.id, live.id]);
      expect(data.every((event) => event.session === session)).toBe(true);
    }
    await stillServing();
  });
});
