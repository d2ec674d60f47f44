/**
 * Faults on the delivery path, each on this file's own stack (fault layer on):
 * - the fan-out invocation failing in the middle of its batch (reported or thrown), which the
 *   stream poller redelivers as Lambda's event source mapping does;
 * - PostToConnection answering 429 / 500 (retried), a connection that keeps refusing
 *   (deliver-or-disconnect, AEP-0003 §8.4), and 410 (the connection is cleaned up);
 * - the stream poller stopped and started again.
 * The promise: no loss. Every acknowledged event reaches every matching live subscriber at
 * least once (duplicates allowed) and is in replay; a consumer the relay cannot deliver a
 * notice-or-above event to is disconnected with a `closing` frame, never silently skipped.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TENANT } from '../../local/stack.ts';
import { openStream } from '../support/sse-client.ts';
import type { SseStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { Frame, TestSocket } from '../support/ws-client.ts';
import { eventOf, eventually, postAccepted, sleep, startOwnStack, uniqueName } from './support/fault-stack.ts';
import type { OwnStack } from './support/fault-stack.ts';

let stack: OwnStack;

beforeAll(async () => {
  stack = await startOwnStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

afterEach(async () => {
  await stack.setFaults({});
  await stack.startPoller();
});

const eventIds = (frames: readonly Frame[]) => new Set(frames.filter((frame) => typeof frame.type === 'string' && frame.type.includes('.')).map((frame) => String(frame.id)));
const sseIds = (stream: SseStream) => new Set(stream.messages().map((message) => String(message.json.id)));
const missing = (expected: Iterable<string>, got: Set<string>) => [...expected].filter((id) => !got.has(id));

async function consumer(filter: Record<string, unknown>, userAgent?: string): Promise<TestSocket> {
  const socket = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.token, ...(userAgent === undefined ? {} : { headers: { 'user-agent': userAgent } }) });
  socket.send({ type: 'subscribe', id: 'sub', filter });
  await socket.next(isType('subscribed'));
  return socket;
}

async function sseConsumer(filter: Record<string, unknown>): Promise<SseStream> {
  const stream = await openStream({ filter: JSON.stringify(filter) }, { baseUrl: stack.baseUrl, token: stack.token });
  expect(stream.status).toBe(200);
  await stream.waitFor((items) => items.some((item) => item.kind === 'comment'));
  return stream;
}

const accepted = (events: Array<Record<string, unknown>>) => postAccepted(stack, events);

/** Waits until each WebSocket and SSE consumer has received every id at least once. */
async function allDelivered(ids: readonly string[], sockets: readonly TestSocket[], streams: readonly SseStream[], timeoutMs = 20_000): Promise<void> {
  for (const [index, socket] of sockets.entries()) {
    await eventually(() => missing(ids, eventIds(socket.frames)).length === 0, () => `WebSocket consumer ${index} misses ${missing(ids, eventIds(socket.frames)).length} of ${ids.length}`, timeoutMs);
  }
  for (const [index, stream] of streams.entries()) {
    await eventually(() => missing(ids, sseIds(stream)).length === 0, () => `SSE consumer ${index} misses ${missing(ids, sseIds(stream)).length} of ${ids.length}`, timeoutMs);
  }
}

const onFailureLines = () => stack.process.output().split('\n').filter((line) => line.includes('records sent to the on-failure destination'));

describe('fan-out failing mid-batch', () => {
  for (const mode of ['report', 'throw'] as const) {
    it(`redelivers after a ${mode === 'report' ? 'reported record failure' : 'function error'} and no subscriber misses an event`, async () => {
      const sessions = [uniqueName(`fo-${mode}-a`), uniqueName(`fo-${mode}-b`)];
      const bySession = await consumer({ session: sessions });
      const byType = await consumer({ type: 'progress.*' });
      const sse = await sseConsumer({ session: sessions });
      const failuresBefore = onFailureLines().length;
      // Up to three faulty invocations in a row: within the retry budget, so nothing may be lost.
      await stack.setFaults({ fanout: { mode, count: 3, every: 1 } });

      // Batches of 15 from two emitters at once, so stream batches hold several records.
      const events = sessions.flatMap((session) => Array.from({ length: 45 }, (_, seq) => eventOf(session, seq)));
      await Promise.all(sessions.map(async (session) => {
        const own = events.filter((event) => event.session === session);
        for (let offset = 0; offset < own.length; offset += 15) await accepted(own.slice(offset, offset + 15));
      }));
      const ids = events.map((event) => String(event.id));
      await allDelivered(ids, [bySession, byType], [sse]);

      const report = await stack.faults();
      console.log(`[faults] fan-out ${mode}: ${report.fanout.invocations} invocations, ${report.fanout.injected} failed mid-batch, ${report.fanout.redeliveredRecords} records redelivered`);
      expect(report.fanout.injected).toBeGreaterThan(0);
      expect(report.fanout.redeliveredRecords).toBeGreaterThan(0);
      expect(onFailureLines()).toHaveLength(failuresBefore);
      // Replay holds every one of them, once.
      for (const session of sessions) {
        expect((await stack.stored(session)).map((event) => event.id)).toEqual(events.filter((event) => event.session === session).map((event) => event.id));
      }
      for (const socket of [bySession, byType]) socket.socket.terminate();
      sse.close();
    }, 60_000);
  }

  it('sends a record that still fails after the retry budget to the on-failure destination; it stays in replay, later records flow again, and a gap fill brings it live below the next one', async () => {
    const session = uniqueName('fo-discard');
    const watcher = await consumer({ session });
    // One invocation and its three retries fail: the mapping's MaximumRetryAttempts (3) is used up.
    await stack.setFaults({ fanout: { mode: 'throw', count: 4, every: 1, minRecords: 1 } });
    const doomed = eventOf(session, 0);
    await accepted([doomed]);
    await eventually(() => onFailureLines().some((line) => line.includes(String(doomed.id))), () => 'the record never reached the on-failure destination', 15_000);
    // The failure record carries the discarded records themselves, as the deployed S3 destination
    // does (docs/operations.md "Failed batches"): the stored event is readable from it, past the stream's 24 h.
    const failureLine = onFailureLines().find((line) => line.includes(String(doomed.id)))!;
    const failure = (JSON.parse(failureLine.slice(failureLine.indexOf('{'))) as { failure: { DDBStreamBatchInfo: { shardId: string }; records: Array<{ dynamodb?: { NewImage?: unknown } }> } }).failure;
    expect(failure.DDBStreamBatchInfo.shardId).toEqual(expect.any(String));
    expect(failure.records.some((record) => JSON.stringify(record.dynamodb?.NewImage ?? {}).includes(String(doomed.id)))).toBe(true);
    await stack.setFaults({});
    const next = eventOf(session, 1);
    await accepted([next]);
    await watcher.next((frame) => frame.id === next.id);
    // The doomed record was discarded, but the event is in the log: `next`'s gap check finds it,
    // and once its record has not come for `AEP_ORDER_ADOPT_MS` it is released from the log, in
    // order: the watcher gets the doomed event too, first (`order/emitter-order.ts`).
    const received = watcher.frames.filter((frame) => frame.id === doomed.id || frame.id === next.id).map((frame) => frame.id);
    expect(received).toEqual([doomed.id, next.id]);
    expect((await stack.stored(session)).map((event) => event.id)).toEqual([doomed.id, next.id]);
    // A consumer that resumes (or replays) gets it.
    const resumed = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.token });
    resumed.send({ type: 'subscribe', id: 'resume', filter: { session }, from: 'all' });
    await resumed.next((frame) => frame.id === doomed.id);
    for (const socket of [watcher, resumed]) socket.socket.terminate();
  });
});

describe('PostToConnection faults', () => {
  it('retries 429 and 500 answers and delivers', async () => {
    const session = uniqueName('post-retry');
    const throttled = await consumer({ session }, 'flaky-429');
    const failing = await consumer({ session }, 'flaky-500');
    await stack.setFaults({ connections: [{ userAgent: 'flaky-429', status: 429, count: 2 }, { userAgent: 'flaky-500', status: 500, count: 2 }] });
    const events = [eventOf(session, 0, { severity: 'notice' }), eventOf(session, 1)];
    await accepted(events);
    await allDelivered(events.map((event) => String(event.id)), [throttled, failing], []);
    const report = await stack.faults();
    expect(report.connections['flaky-429']).toMatchObject({ refused: 2 });
    expect(report.connections['flaky-500']).toMatchObject({ refused: 2 });
    expect([...throttled.frames, ...failing.frames].filter((frame) => frame.type === 'closing')).toEqual([]);
    for (const socket of [throttled, failing]) socket.socket.terminate();
  });

  it('drops info toward a connection that keeps refusing, and for a notice sends closing then closes it; the consumer resumes from replay', async () => {
    const session = uniqueName('post-refuse');
    const slow = await consumer({ session }, 'always-429');
    const healthy = await consumer({ session });
    // Every event post to the slow consumer is refused (429); frames such as `closing` pass.
    await stack.setFaults({ connections: [{ userAgent: 'always-429', status: 429, kind: 'event' }] });
    const info = eventOf(session, 0, { severity: 'info' });
    await accepted([info]);
    await healthy.next((frame) => frame.id === info.id);
    await eventually(async () => ((await stack.faults()).connections['always-429']?.refused ?? 0) >= 3, () => 'the info event was not attempted three times');
    // Dropped, not disconnected: the connection still answers.
    slow.send({ type: 'ping', t: 'still-here' });
    await slow.next(isType('pong'));
    expect(slow.all(isType('closing'))).toEqual([]);

    const notice = eventOf(session, 1, { severity: 'notice', type: 'progress.status' });
    await accepted([notice]);
    const closing = await slow.next(isType('closing'));
    expect(closing).toMatchObject({ type: 'closing', reason: 'backpressure' });
    // It claims no position it did not deliver.
    expect(Array.isArray(closing.delivered)).toBe(true);
    expect(closing.delivered.filter((position: Frame) => position.session === session)).toEqual([]);
    await slow.closed;
    expect(eventIds(slow.frames).size).toBe(0);
    const report = await stack.faults();
    expect(report.connections['always-429']?.deletes).toBeGreaterThanOrEqual(1);

    // Deliver or disconnect: the disconnected consumer resumes exactly and gets both.
    const resumed = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.token });
    resumed.send({ type: 'subscribe', id: 'again', filter: { session }, from: 'all' });
    await resumed.next((frame) => frame.id === info.id);
    await resumed.next((frame) => frame.id === notice.id);
    for (const socket of [healthy, resumed]) socket.socket.terminate();
  });

  it('cleans a connection up when PostToConnection answers 410, and posts to it no more', async () => {
    const session = uniqueName('post-gone');
    const gone = await consumer({ session }, 'gone-410');
    const healthy = await consumer({ session });
    await stack.setFaults({ connections: [{ userAgent: 'gone-410', status: 410 }] });
    const first = eventOf(session, 0);
    await accepted([first]);
    await healthy.next((frame) => frame.id === first.id);
    await eventually(async () => ((await stack.faults()).connections['gone-410']?.refused ?? 0) >= 1, () => 'no post reached the gone connection');
    const connectionId = (await stack.faults()).connections['gone-410']?.connectionId ?? '';
    // Its record goes first, then what it owned (subscription index entries among them).
    await eventually(async () => (await stack.connections().connections.getConnection(LOCAL_TENANT, connectionId)) === undefined, () => `connection ${connectionId} still recorded`);
    await eventually(
      async () => !(await stack.connections().subscriptions.subscriptionsFor(LOCAL_TENANT, [session])).some((subscription) => subscription.connectionId === connectionId),
      () => `connection ${connectionId} still subscribed`,
    );

    const second = eventOf(session, 1);
    await accepted([second]);
    await healthy.next((frame) => frame.id === second.id);
    await sleep(300);
    expect((await stack.faults()).connections['gone-410']).toMatchObject({ posts: 1, refused: 1 });
    gone.socket.terminate();
    healthy.socket.terminate();
  });
});

describe('stream poller restart', () => {
  it('delivers the events written while it was stopped once it starts again, twice over', async () => {
    const session = uniqueName('poller');
    const socket = await consumer({ session });
    const sse = await sseConsumer({ session });
    const all: string[] = [];
    let seq = 0;
    for (let round = 0; round < 2; round += 1) {
      await stack.stopPoller();
      const written = Array.from({ length: 12 }, () => eventOf(session, seq++));
      for (let offset = 0; offset < written.length; offset += 4) await accepted(written.slice(offset, offset + 4));
      all.push(...written.map((event) => String(event.id)));
      await sleep(300);
      // Nothing moves while the poller is down...
      expect(missing(written.map((event) => String(event.id)), eventIds(socket.frames))).toHaveLength(written.length);
      await stack.startPoller();
      // ...and everything written meanwhile arrives once it is back.
      await allDelivered(all, [socket], [sse]);
    }
    const after = eventOf(session, seq);
    await accepted([after]);
    await allDelivered([...all, String(after.id)], [socket], [sse]);
    expect((await stack.stored(session))).toHaveLength(all.length + 1);
    socket.socket.terminate();
    sse.close();
  });
});
