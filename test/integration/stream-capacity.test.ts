/**
 * The deployment's live-stream cap (`AEP_SSE_MAX_LIVE_STREAMS`, set below the stream
 * function's reserved concurrency): a stream over it is refused by the relay with 503 and
 * Retry-After, before Lambda would throttle; a slot freed by a stream's end is taken again.
 * A stack of its own, capped at two live streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_SSE_MAX_LIVE_STREAMS: '2', AEP_SSE_MAX_DURATION_MS: '60000' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('live stream capacity', () => {
  it('refuses a live stream over the cap with 503 and Retry-After, serves replay-only streams, and admits again once one ends', async () => {
    const options = { token: stack.devToken, baseUrl: stack.baseUrl };
    const first = await openStream({}, options);
    const second = await openStream({}, options);
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await openStream({}, options);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'unavailable' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A replay-only stream takes no live slot.
    const replay = await openStream({ live: '0' }, options);
    expect(replay.status).toBe(200);
    await replay.ended;
    first.close();
    // The local gateway tells the handler when its client leaves, so the slot frees promptly.
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
