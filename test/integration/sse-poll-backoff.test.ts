/**
 * An idle SSE stream's inbox poll backs off (src/relay/sse/poll-backoff.ts) on a stack of its
 * own: base 100 ms, cap 2 s after 8 empty reads, streams long enough to go quiet. Nothing is
 * lost, duplicated or reordered across backoff. The latency it adds is bounded by the schedule
 * itself (`test/relay/sse/poll-backoff.test.ts`), and timed in the bench, not here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { ndjson, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import type { SseStream } from '../support/sse-client.ts';

const BASE_POLL_MS = 100;
const IDLE_POLL_MS = 2_000;
const BACKOFF_AFTER_POLLS = 8;

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({
    env: {
      AEP_SSE_POLL_MS: String(BASE_POLL_MS),
      AEP_SSE_IDLE_POLL_MS: String(IDLE_POLL_MS),
      AEP_SSE_BACKOFF_AFTER_POLLS: String(BACKOFF_AFTER_POLLS),
      AEP_SSE_MAX_DURATION_MS: '120000',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(session: string, seqs: readonly number[]): Promise<void> {
  const response = await postEvents(ndjson(seqs.map((seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson', token: stack.devToken, baseUrl: stack.baseUrl });
  expect(response.status).toBe(202);
}

async function liveStream(session: string): Promise<SseStream> {
  const stream = await openStream({ filter: JSON.stringify({ session }) }, { token: stack.devToken, baseUrl: stack.baseUrl });
  expect(stream.status).toBe(200);
  await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text === 'replay-complete'));
  return stream;
}

const seqsOf = (stream: SseStream, session: string) => stream.messages().filter((message) => message.json.session === session).map((message) => message.json.seq as number);

describe('SSE inbox poll backoff', () => {
  it('loses, repeats and reorders nothing across backoff: bursts after short, medium and long quiet periods', async () => {
    const session = uniqueName('sse-backoff-order');
    const stream = await liveStream(session);
    // Gaps before each post (ms): within the base rate, inside the doubling, at the cap, and a
    // burst of posts landing while the stream is backed off.
    const plan: Array<{ gapMs: number; count: number }> = [
      { gapMs: 0, count: 3 }, { gapMs: 150, count: 1 }, { gapMs: 1_200, count: 2 }, { gapMs: 2_500, count: 5 },
      { gapMs: 5_000, count: 1 }, { gapMs: 30, count: 4 }, { gapMs: 30, count: 2 }, { gapMs: 4_500, count: 10 }, { gapMs: 900, count: 1 },
    ];
    let next = 0;
    for (const { gapMs, count } of plan) {
      await sleep(gapMs);
      await post(session, Array.from({ length: count }, () => next++));
    }
    const expected = Array.from({ length: next }, (_, seq) => seq);
    await stream.waitFor((items) => items.filter((item) => item.kind === 'message' && item.json.session === session).length >= next, 30_000);
    // A little longer: a duplicate would come after the last event.
    await sleep(IDLE_POLL_MS + 500);
    expect(seqsOf(stream, session)).toEqual(expected);
    stream.close();
  });
});
