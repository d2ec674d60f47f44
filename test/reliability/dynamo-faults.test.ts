/**
 * DynamoDB throttling and transient errors (the fault layer's `dynamo` rules) during ingest
 * over HTTP and WebSocket. The promise: the SDK's retry absorbs transient faults; what it
 * cannot absorb is answered 503 `unavailable` (in-band `unavailable` on the socket), having
 * stored at most a prefix of the request; a retry with the same ids stores each event once.
 * Every acknowledged event is in replay and delivered live to every matching subscriber.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localTableNames } from '../../local/create-tables.ts';
import { openStream } from '../support/sse-client.ts';
import type { SseStream } from '../support/sse-client.ts';
import { helloSocket, isType, untilClaimed } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';
import { eventOf, eventually, mintId, post, sleep, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';

let stack: OwnStack;
const EVENTS_TABLE = localTableNames('aep-local').events;
const CONNECTIONS_TABLE = localTableNames('aep-local').connections;

beforeAll(async () => {
  stack = await startOwnStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

afterEach(async () => {
  await stack.setFaults({});
});

const idsOf = (frames: readonly Frame[]) => new Set(frames.filter((frame) => typeof frame.type === 'string' && frame.type.includes('.')).map((frame) => String(frame.id)));
const sseIds = (stream: SseStream) => new Set(stream.messages().map((message) => String(message.json.id)));

/** Subscribers on both live bindings, filtered to `sessions`. */
async function subscribers(sessions: string[]): Promise<{ socket: TestSocket; sse: SseStream }> {
  const socket = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.token });
  socket.send({ type: 'subscribe', id: 'live', filter: { session: sessions } });
  await socket.next(isType('subscribed'));
  const sse = await openStream({ filter: JSON.stringify({ session: sessions }) }, { baseUrl: stack.baseUrl, token: stack.token });
  expect(sse.status).toBe(200);
  await sse.waitFor((items) => items.some((item) => item.kind === 'comment'));
  return { socket, sse };
}

/** Posts until 202, resending the same body (same ids) after each 503; returns every status seen. */
async function postUntilAccepted(events: Array<Record<string, unknown>>): Promise<Array<{ status: number; error?: unknown }>> {
  const answers: Array<{ status: number; error?: unknown }> = [];
  for (let attempt = 0; attempt < 30; attempt += 1) {
    const { status, body } = await post(stack.baseUrl, stack.token, events);
    answers.push({ status, error: body.error });
    if (status !== 503) return answers;
    await sleep(50);
  }
  return answers;
}

describe('DynamoDB throttling and transient errors', () => {
  it('on every call site during HTTP and WebSocket ingest: each acknowledged event is stored once, replayed, and delivered live', async () => {
    const httpSessions = [uniqueName('ddb-h1'), uniqueName('ddb-h2'), uniqueName('ddb-h3'), uniqueName('ddb-h4')];
    const wsSession = uniqueName('ddb-ws');
    const sessions = [...httpSessions, wsSession];
    const { socket, sse } = await subscribers(sessions);
    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } }, { baseUrl: stack.baseUrl, token: stack.token });

    // Everything from here on runs with faults on every DynamoDB command, in every handler.
    await stack.setFaults({
      seed: 20_260_703,
      dynamo: [
        // The write happened, its answer was lost: the SDK's retry then meets the stored item.
        { commands: ['PutItemCommand'], error: 'InternalServerError', rate: 0.04, phase: 'after' },
        { error: 'ProvisionedThroughputExceededException', rate: 0.02 },
        { error: 'ThrottlingException', rate: 0.02 },
        { error: 'InternalServerError', rate: 0.07 },
      ],
    });

    // HTTP: four emitters at once, each three batches of eight events for its own session.
    const httpEvents = new Map(httpSessions.map((session) => [session, Array.from({ length: 24 }, (_, seq) => eventOf(session, seq))]));
    const httpRun = Promise.all(
      httpSessions.map(async (session) => {
        const events = httpEvents.get(session) ?? [];
        const answers: Array<{ status: number; error?: unknown }> = [];
        for (let batch = 0; batch < 3; batch += 1) answers.push(...(await postUntilAccepted(events.slice(batch * 8, batch * 8 + 8))));
        return answers;
      }),
    );

    // WebSocket: 24 events pipelined on one emitter connection; an in-band `unavailable` is resent with the same id.
    const wsEvents = Array.from({ length: 24 }, (_, seq) => eventOf(wsSession, seq));
    for (const event of wsEvents) emitter.send(event);
    const resent = new Set<unknown>();
    const wsRun = eventually(
      async () => {
        for (const error of emitter.all(isType('error'))) {
          if (error.code === 'unavailable' && !resent.has(error)) {
            resent.add(error);
            emitter.send(wsEvents.find((event) => event.id === error.cause));
          }
        }
        return (await stack.stored(wsSession)).length === wsEvents.length;
      },
      () => `WebSocket events stored: ${JSON.stringify(emitter.frames).slice(0, 2000)}`,
      40_000,
    );

    const httpAnswers = (await httpRun).flat();
    await wsRun;
    const report = await stack.faults();
    await stack.setFaults({});
    const injected = Object.values(report.dynamo.injected).reduce((sum, count) => sum + count, 0);
    const calls = Object.values(report.dynamo.calls).reduce((sum, count) => sum + count, 0);
    console.log(`[faults] DynamoDB: ${injected} faults in ${calls} calls ${JSON.stringify(report.dynamo.injected)}; HTTP answers ${httpAnswers.length} (${httpAnswers.filter((answer) => answer.status === 503).length} x 503); in-band unavailable ${resent.size}`);

    // Faults hit reads and writes of the handlers, and were absorbed or surfaced, never anything else
    // (which other commands the seeded draw hits depends on how many each handler makes).
    expect(Object.keys(report.dynamo.injected)).toEqual(expect.arrayContaining(['GetItemCommand', 'PutItemCommand']));
    for (const answer of httpAnswers) {
      expect([202, 503]).toContain(answer.status);
      if (answer.status === 503) expect(answer.error).toBe('unavailable');
    }
    expect(httpAnswers.filter((answer) => answer.status === 202)).toHaveLength(12);
    expect(emitter.all(isType('error')).filter((frame) => frame.code !== 'unavailable')).toEqual([]);

    // Stored exactly once each, in order: the log is the same as without faults.
    const expected = new Map([...httpEvents, [wsSession, wsEvents]]);
    for (const [session, events] of expected) {
      const stored = await stack.stored(session);
      expect(stored.map((event) => event.id), session).toEqual(events.map((event) => event.id));
    }
    const allIds = new Set([...expected.values()].flat().map((event) => String(event.id)));

    // Live: every event reached both subscribers at least once.
    await eventually(
      () => [...allIds].every((id) => idsOf(socket.frames).has(id)),
      () => `WebSocket subscriber missing ${[...allIds].filter((id) => !idsOf(socket.frames).has(id)).length} of ${allIds.size}`,
    );
    await eventually(
      () => [...allIds].every((id) => sseIds(sse).has(id)),
      () => `SSE subscriber missing ${[...allIds].filter((id) => !sseIds(sse).has(id)).length} of ${allIds.size}`,
    );

    // Replay through the relay serves every one of them.
    const replay = await openStream({ from: 'all', live: '0', filter: JSON.stringify({ session: sessions }) }, { baseUrl: stack.baseUrl, token: stack.token });
    await replay.ended;
    expect(sseIds(replay)).toEqual(allIds);
    expect(replay.messages()).toHaveLength(allIds.size);

    socket.socket.terminate();
    emitter.socket.terminate();
    sse.close();
  }, 60_000);

  it('a batch whose write fails past the retries answers 503 unavailable having stored a prefix; the retry with the same ids stores each once', async () => {
    const session = uniqueName('ddb-prefix');
    const { socket } = await subscribers([session]);
    const events = Array.from({ length: 8 }, (_, seq) => eventOf(session, seq));
    // The fourth event's write fails on all six attempts the SDK makes.
    await stack.setFaults({ dynamo: [{ commands: ['PutItemCommand'], tables: [EVENTS_TABLE], functions: ['http'], error: 'InternalServerError', skip: 3, count: 6 }] });
    const first = await post(stack.baseUrl, stack.token, events);
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ error: 'unavailable' });
    expect((await stack.stored(session)).map((event) => event.id)).toEqual(events.slice(0, 3).map((event) => event.id));

    const retry = await post(stack.baseUrl, stack.token, events);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ accepted: 8, stored: 5, duplicates: 3 });
    expect((await stack.stored(session)).map((event) => event.id)).toEqual(events.map((event) => event.id));
    await eventually(
      () => events.every((event) => idsOf(socket.frames).has(String(event.id))),
      () => `delivered: ${[...idsOf(socket.frames)].length} of ${events.length}`,
    );
    socket.socket.terminate();
  });

  it('an event refused in-band with unavailable on the socket is stored once when resent with the same id', async () => {
    const session = uniqueName('ddb-ws-503');
    const { socket } = await subscribers([session]);
    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } }, { baseUrl: stack.baseUrl, token: stack.token });
    const event = eventOf(session, 0);
    await stack.setFaults({ dynamo: [{ commands: ['PutItemCommand'], tables: [EVENTS_TABLE], error: 'InternalServerError', count: 6 }] });
    emitter.send(event);
    expect(await emitter.next(isType('error'))).toMatchObject({ code: 'unavailable', cause: event.id });
    expect(await stack.stored(session)).toEqual([]);
    await stack.setFaults({});
    emitter.send(event);
    await eventually(async () => (await stack.stored(session)).length === 1, () => 'the resent event was not stored');
    await socket.next((frame) => frame.id === event.id);
    expect(await stack.stored(session)).toHaveLength(1);
    socket.socket.terminate();
    emitter.socket.terminate();
  });

  it('a session claim whose write was done but whose answer was lost is complete: commands still route to the claimant', async () => {
    const session = uniqueName('ddb-claim');
    const agent = await helloSocket({ role: 'emitter', identity: { agent: 'tester' }, capabilities: { control: { accepts: ['control.pause'] } } }, { baseUrl: stack.baseUrl, token: stack.token });
    // The claim's first write (fan-out's, from the event) reaches DynamoDB, its acknowledgement
    // does not: the batch is retried into the stored item.
    await stack.setFaults({ dynamo: [{ commands: ['PutItemCommand'], tables: [CONNECTIONS_TABLE], functions: ['fanout'], error: 'InternalServerError', count: 1, phase: 'after' }] });
    agent.send(eventOf(session, 0));
    await eventually(async () => (await stack.stored(session)).length === 1, () => 'the claiming event was not stored');
    await untilClaimed({ baseUrl: stack.baseUrl, token: stack.token }, session);
    expect((await stack.faults()).dynamo.injected).toEqual({ PutItemCommand: 1 });
    await stack.setFaults({});
    const phone = await helloSocket({ role: 'consumer', identity: { agent: 'phone' } }, { baseUrl: stack.baseUrl, token: stack.token });
    const pause = { aep: '0.1', id: mintId(), type: 'control.pause', time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session, data: {} };
    phone.send(pause);
    const routed = await Promise.race([agent.next((frame) => frame.id === pause.id), phone.next(isType('error')).then((error) => ({ refused: error }))]);
    expect(routed).toMatchObject({ type: 'control.pause', id: pause.id });
    agent.socket.terminate();
    phone.socket.terminate();
  });

  it('an event whose session claim cannot be written yet is stored, and reaches no consumer before its claim does', async () => {
    const session = uniqueName('ddb-claim-held');
    const watcher = await helloSocket({ role: 'consumer' }, { baseUrl: stack.baseUrl, token: stack.token });
    watcher.send({ type: 'subscribe', id: 'w', filter: { session } });
    await watcher.next(isType('subscribed'));
    const agent = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } }, { baseUrl: stack.baseUrl, token: stack.token });
    // Every claim write fails past the SDK's retries: fan-out reports the batch failed, and retries it.
    await stack.setFaults({ dynamo: [{ commands: ['PutItemCommand'], tables: [CONNECTIONS_TABLE], functions: ['fanout'], error: 'InternalServerError', count: 18 }] });
    const event = eventOf(session, 0);
    agent.send(event);
    await eventually(async () => (await stack.stored(session)).length === 1, () => 'the event was not stored');
    await eventually(async () => ((await stack.faults()).dynamo.injected.PutItemCommand ?? 0) >= 6, () => 'fan-out never tried the claim');
    expect(watcher.all((frame) => frame.id === event.id)).toEqual([]);
    expect(agent.all(isType('error'))).toEqual([]);
    await stack.setFaults({});
    // Once the claim is written the event goes out, and a command can reach its emitter.
    await watcher.next((frame) => frame.id === event.id, 30_000);
    await untilClaimed({ baseUrl: stack.baseUrl, token: stack.token }, session);
    agent.socket.terminate();
    watcher.socket.terminate();
  });

  it('a storage failure outside the event write (the token lookup) answers 503 unavailable, not 500, on POST /events and GET /stream', async () => {
    const session = uniqueName('ddb-auth');
    const event = eventOf(session, 0);
    await stack.setFaults({ dynamo: [{ commands: ['GetItemCommand'], functions: ['http'], error: 'InternalServerError', count: 6 }] });
    const refused = await post(stack.baseUrl, stack.token, [event]);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'unavailable' });
    expect(await stack.stored(session)).toEqual([]);

    await stack.setFaults({ dynamo: [{ commands: ['GetItemCommand'], functions: ['stream'], error: 'InternalServerError', count: 6 }] });
    const stream = await openStream({ filter: JSON.stringify({ session }) }, { baseUrl: stack.baseUrl, token: stack.token });
    expect(stream.status).toBe(503);
    expect(stream.body).toMatchObject({ error: 'unavailable' });

    await stack.setFaults({});
    expect((await post(stack.baseUrl, stack.token, [event])).status).toBe(202);
    expect((await stack.stored(session)).map((stored) => stored.id)).toEqual([event.id]);
  });
});
