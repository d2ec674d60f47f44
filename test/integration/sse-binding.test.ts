import { describe, expect, inject, it } from 'vitest';
import { TEST_SSE_MAX_DURATION_MS } from '../support/global-setup.ts';
import { ndjson, postEvents, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import type { SseItem } from '../support/sse-client.ts';

async function postBatch(events: readonly unknown[], token?: string): Promise<void> {
  const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson', ...(token === undefined ? {} : { token }) });
  expect(response.status).toBe(202);
}

const messagesOf = (session: string) => (items: SseItem[]) =>
  items.filter((item): item is Extract<SseItem, { kind: 'message' }> => item.kind === 'message' && item.json.session === session);

describe('GET /stream', () => {
  it('refuses a bad filter, from or capture with 400 and a JSON error before any stream header', async () => {
    const queries: Array<Record<string, string>> = [{ filter: '{"seq":1}' }, { filter: 'not json' }, { from: '{"session":"s"}' }, { capture: 'everything' }, { live: "maybe" }];
    for (const query of queries) {
      const stream = await openStream(query);
      expect(stream.status, JSON.stringify(query)).toBe(400);
      expect(stream.body).toMatchObject({ error: 'invalid-filter' });
    }
  });

  it('refuses a request without a token with 401 and accepts the access_token query fallback', async () => {
    expect((await openStream({}, { token: '' })).status).toBe(401);
    const stream = await openStream({ live: '0' }, { tokenInQuery: true });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await stream.ended;
  });

  it('delivers a filtered NDJSON batch complete and in (epoch, seq) order, with event, data and id fields', async () => {
    const session = uniqueName('sse-batch');
    const stream = await openStream({ filter: JSON.stringify({ session }) });
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment'));
    const events = Array.from({ length: 25 }, (_, seq) => sessionEvent(session, seq, { type: seq % 2 === 0 ? 'tool.requested' : 'progress.status', ...(seq % 2 === 0 ? { data: { tool: { name: 'Bash' } } } : {}) }));
    const startedAt = performance.now();
    await postBatch([...events, sessionEvent(uniqueName('other'), 0)]);
    await stream.waitFor((items) => messagesOf(session)(items).length === 25);
    console.log(`[latency] NDJSON batch of 25 to SSE delivery: ${(performance.now() - startedAt).toFixed(0)} ms`);
    const received = messagesOf(session)(stream.items);
    expect(received.map((message) => message.json.seq)).toEqual(events.map((event) => event.seq));
    expect(received.map((message) => message.event)).toEqual(events.map((event) => event.type));
    expect(received.map((message) => message.id)).toEqual(events.map((event) => `${session}:0:${event.seq}`));
    expect(received.map((message) => message.data)).toEqual(events.map((event) => JSON.stringify(event)));
    stream.close();
  });

  it('replays exactly the events after from, without duplicates, and ends after replay with live=0', async () => {
    const session = uniqueName('sse-from');
    await postBatch(Array.from({ length: 8 }, (_, seq) => sessionEvent(session, seq)));
    const stream = await openStream({ from: JSON.stringify([{ session, epoch: 0, seq: 0 }]), live: '0' });
    await stream.ended;
    expect(stream.messages().map((message) => message.json.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('resumes after Last-Event-ID, and from takes precedence over it', async () => {
    const session = uniqueName('sse-resume');
    await postBatch(Array.from({ length: 6 }, (_, seq) => sessionEvent(session, seq)));
    const resumed = await openStream({ live: '0' }, { lastEventId: `${session}:0:3` });
    await resumed.ended;
    expect(resumed.messages().map((message) => message.json.seq)).toEqual([4, 5]);
    const overridden = await openStream({ live: '0', from: JSON.stringify([{ session, epoch: 0, seq: 1 }]) }, { lastEventId: `${session}:0:3` });
    await overridden.ended;
    expect(overridden.messages().map((message) => message.json.seq)).toEqual([2, 3, 4, 5]);
  });

  it('accepts seq -1 (epoch 0) in from as before the first position, and marks the end of the replay with : replay-complete before ending', async () => {
    const session = uniqueName('sse-before-first');
    await postBatch(Array.from({ length: 3 }, (_, seq) => sessionEvent(session, seq)));
    const stream = await openStream({ from: JSON.stringify([{ session, epoch: 0, seq: -1 }]), live: '0' });
    expect(stream.status).toBe(200);
    await stream.ended;
    expect(stream.messages().map((message) => message.json.seq)).toEqual([0, 1, 2]);
    const lastItem = stream.items[stream.items.length - 1];
    expect(lastItem).toEqual({ kind: 'comment', text: 'replay-complete' });
    expect(stream.comments().filter((text) => text.startsWith('replay-exhausted'))).toEqual([]);
    const refused = await openStream({ from: JSON.stringify([{ session, epoch: 1, seq: -1 }]), live: '0' });
    expect(refused.status).toBe(400);
  });

  it('sends : replay-complete on a live stream at the handoff, after the replayed events and before live ones', async () => {
    const session = uniqueName('sse-handoff');
    await postBatch([sessionEvent(session, 0)]);
    const stream = await openStream({ filter: JSON.stringify({ session }), from: JSON.stringify([{ session, epoch: 0, seq: -1 }]) });
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text === 'replay-complete'));
    await postBatch([sessionEvent(session, 1)]);
    await stream.waitFor((items) => messagesOf(session)(items).length >= 2);
    const marker = stream.items.findIndex((item) => item.kind === 'comment' && item.text === 'replay-complete');
    const order = stream.items.flatMap((item, index) => (item.kind === 'message' ? [{ index, seq: item.json.seq }] : []));
    expect(order.find((entry) => entry.seq === 0)!.index).toBeLessThan(marker);
    expect(order.find((entry) => entry.seq === 1)!.index).toBeGreaterThan(marker);
    stream.close();
  });

  it('replays every held session for from=all with no replay-exhausted marker', async () => {
    const tenant = uniqueName('sse-all');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const sessions = [uniqueName('a'), uniqueName('b')];
    for (const session of sessions) await postBatch([sessionEvent(session, 0), sessionEvent(session, 1)], token);
    const stream = await openStream({ from: 'all', live: '0' }, { token });
    await stream.ended;
    expect(new Set(stream.messages().map((message) => message.json.session))).toEqual(new Set(sessions));
    expect(stream.messages()).toHaveLength(4);
    expect(stream.comments().filter((text) => text.startsWith('replay-exhausted'))).toEqual([]);
  });

  it('sends the replay-exhausted comment before the replayed data when the position predates the window', async () => {
    const session = uniqueName('sse-exhausted');
    const buffer = inject('replayBuffer');
    await postBatch(Array.from({ length: buffer + 5 }, (_, seq) => sessionEvent(session, seq)));
    const stream = await openStream({ from: JSON.stringify([{ session, epoch: 0, seq: 1 }]), live: '0' });
    await stream.ended;
    const markerIndex = stream.items.findIndex((item) => item.kind === 'comment' && item.text === `replay-exhausted ${session} 0:5`);
    const firstMessage = stream.items.findIndex((item) => item.kind === 'message');
    expect(markerIndex).toBeGreaterThanOrEqual(0);
    expect(markerIndex).toBeLessThan(firstMessage);
    expect(stream.messages().map((message) => message.json.seq)).toEqual(Array.from({ length: buffer }, (_, index) => index + 5));
  });

  it('never leaks a redacted field through a metadata ceiling, in replay or live', async () => {
    const session = uniqueName('sse-ceiling');
    const secret = (seq: number) => sessionEvent(session, seq, { type: 'tool.failed', capture: 'redacted', data: { tool: { name: 'Bash' }, error: { type: 'ExecError', message: 'SECRET path' } } });
    await postBatch([secret(0)]);
    const stream = await openStream({ filter: JSON.stringify({ session }), capture: 'metadata' });
    await postBatch([secret(1)]);
    await stream.waitFor((items) => messagesOf(session)(items).length >= 1);
    const replayStream = await openStream({ filter: JSON.stringify({ session }), capture: 'metadata', from: 'all', live: '0' });
    await replayStream.ended;
    for (const message of [...stream.messages(), ...replayStream.messages()]) {
      expect(message.data).not.toContain('SECRET');
      expect(message.json.capture).toBe('metadata');
      expect(message.json.data).toEqual({ tool: { name: 'Bash' }, error: { type: 'ExecError' } });
    }
    expect(replayStream.messages().filter((message) => message.json.session === session)).toHaveLength(2);
    stream.close();
  });

  it('sends a heartbeat comment at the configured interval', async () => {
    const stream = await openStream({ filter: JSON.stringify({ session: uniqueName('quiet') }) });
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text === 'ping'), 5000);
    stream.close();
  });

  it('delivers an event posted 0, 50 and 150 ms after opening the stream, every time', async () => {
    for (const delayMs of [0, 50, 150]) {
      const session = uniqueName(`sse-race-${delayMs}`);
      const opening = openStream({ filter: JSON.stringify({ session }) });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const event = sessionEvent(session, 0);
      const posted = postEvents(JSON.stringify(event));
      const stream = await opening;
      expect((await posted).status).toBe(202);
      await stream.waitFor((items) => messagesOf(session)(items).length === 1, 5000);
      stream.close();
    }
  });

  it('ends cleanly before its duration limit with a comment saying so, and resumes from Last-Event-ID without loss', async () => {
    const session = uniqueName('sse-limit');
    const stream = await openStream({ filter: JSON.stringify({ session }) });
    await postBatch([sessionEvent(session, 0), sessionEvent(session, 1)]);
    await stream.ended;
    expect(stream.comments().some((text) => text.startsWith('closing: the stream reached its duration limit'))).toBe(true);
    const lastId = stream.messages().at(-1)?.id;
    expect(lastId).toBe(`${session}:0:1`);
    await postBatch([sessionEvent(session, 2)]);
    const resumed = await openStream({ filter: JSON.stringify({ session }), live: '0' }, { lastEventId: lastId! });
    await resumed.ended;
    expect(resumed.messages().map((message) => message.json.seq)).toEqual([2]);
  }, TEST_SSE_MAX_DURATION_MS + 15_000);
});
