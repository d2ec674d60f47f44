/**
 * The deployment's stream cap (`AEP_SSE_MAX_LIVE_STREAMS`, set below the stream function's
 * reserved concurrency): a stream over it, live or replay-only, is refused by the relay with
 * 503 and Retry-After, before Lambda would throttle; a slot freed by a stream's end is taken
 * again. A stack of its own, capped at two streams, with no per-tenant share (0) so that its
 * one tenant meets the pool's cap (the share is test/reliability/noisy-streams.test.ts's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_SSE_MAX_LIVE_STREAMS: '2', AEP_SSE_MAX_STREAMS_PER_TENANT: '0', AEP_SSE_MAX_DURATION_MS: '60000', AEP_SSE_IDLE_END_MS: '2000' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('live stream capacity', () => {
  it('refuses a stream over the cap, live or replay-only, with 503 and Retry-After, and admits again once an abandoned one ends', async () => {
    const options = { token: stack.devToken, baseUrl: stack.baseUrl };
    const first = await openStream({}, options);
    const second = await openStream({}, options);
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await openStream({}, options);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'unavailable' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A replay-only stream holds a stream function instance too: it takes a slot like any other.
    const replay = await openStream({ live: '0' }, options);
    expect(replay.status).toBe(503);
    first.close();
    // The abandoned stream gives its slot back once it ends: at once here, where the local
    // gateway tells the function its client left, else after 2 s with nothing to deliver.
    const deadline = Date.now() + 10_000;
    let third = await openStream({}, options);
    while (third.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      third = await openStream({}, options);
    }
    expect(third.status).toBe(200);
    second.close();
    third.close();
  }, 30_000);
});

describe('abandoned streams', () => {
  it('ends a stream that delivers nothing for AEP_SSE_IDLE_END_MS with a comment saying so', async () => {
    // The streams the test above abandoned hold the two slots until they end idle.
    const deadline = Date.now() + 10_000;
    let stream = await openStream({}, { token: stack.devToken, baseUrl: stack.baseUrl });
    while (stream.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      stream = await openStream({}, { token: stack.devToken, baseUrl: stack.baseUrl });
    }
    expect(stream.status).toBe(200);
    await stream.ended;
    expect(stream.comments().some((comment) => /^closing: nothing to deliver for 2 s/.test(comment))).toBe(true);
  }, 20_000);
});
