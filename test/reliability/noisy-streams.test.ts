/**
 * Noisy neighbour, stream lane (issue 26 item 3): tenant A holds every SSE stream it can,
 * live and replay-only, and keeps asking for more, beside tenant B's canary (an SSE consumer
 * and an HTTP emitter). B loses nothing and is refused nothing; its latency beside A is printed next
 * to B alone's, measured first in the same run (support/canary.ts). A stack of its own with a small pool (12
 * streams, a tenant's share 3) so A reaches its share quickly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';
import type { SseStream } from '../support/sse-client.ts';
import { describeRun, expectUndisturbed, ownTenant, runCanary } from './support/canary.ts';

const POOL = 12;
const SHARE = 3;
const CANARY = { consumer: 'sse' as const, events: 60, intervalMs: 100 };

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({
    env: { AEP_SSE_MAX_LIVE_STREAMS: String(POOL), AEP_SSE_MAX_STREAMS_PER_TENANT: String(SHARE), AEP_SSE_MAX_DURATION_MS: '120000', AEP_LOCAL_POLL_MS: '50' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('noisy neighbour: streams', () => {
  it("keeps B's streams whole and on time while A holds its whole share and asks for more", async () => {
    const a = await ownTenant(stack.dynamoEndpoint, 'noisy-a', ['consume', 'emit']);
    const b = await ownTenant(stack.dynamoEndpoint, 'canary-b', ['consume', 'emit']);
    const alone = await runCanary({ baseUrl: stack.baseUrl, token: b.token, ...CANARY });
    console.log(describeRun('streams, B alone', alone));

    // A at its worst: as many streams as it can open, live, then replay-only (which hold a
    // stream function instance too), until it is refused.
    const held: SseStream[] = [];
    const refusals: SseStream[] = [];
    for (let attempt = 0; attempt < SHARE + 3; attempt += 1) {
      const stream = await openStream(attempt % 2 === 0 ? {} : { live: '0', from: 'all' }, { baseUrl: stack.baseUrl, token: a.token });
      (stream.status === 200 ? held : refusals).push(stream);
    }
    // A replay-only stream of an empty tenant ends at once and gives its slot back: what A goes
    // on holding is its live streams, and it keeps asking for more of both kinds below.
    expect(held.length).toBeGreaterThanOrEqual(SHARE);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refused of refusals) {
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: 'limit-exceeded' });
      expect(String((refused.body as { detail?: unknown }).detail)).toMatch(/tenant's share of 3 concurrent streams/);
    }
    let hammering = true;
    let hammered = 0;
    const statuses = new Map<number, number>();
    const hammer = (async () => {
      while (hammering) {
        const stream = await openStream(hammered % 2 === 0 ? {} : { live: '0', from: 'all' }, { baseUrl: stack.baseUrl, token: a.token });
        hammered += 1;
        statuses.set(stream.status, (statuses.get(stream.status) ?? 0) + 1);
        if (stream.status === 200) held.push(stream);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const beside = await runCanary({ baseUrl: stack.baseUrl, token: b.token, ...CANARY });
    hammering = false;
    await hammer;
    console.log(describeRun(`streams, B beside A (A opened ${held.length} streams with a share of ${SHARE}, asking ${hammered} times more: ${JSON.stringify(Object.fromEntries(statuses))})`, beside));
    // A was never served past its share, and B, holding one stream of the pool, got it.
    expect(statuses.get(429) ?? 0).toBeGreaterThan(0);
    expectUndisturbed(alone, beside);
    for (const stream of held) stream.close();
  }, 120_000);
});
