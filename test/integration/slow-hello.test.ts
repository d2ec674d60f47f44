/**
 * A hello-first client whose hello is merely slow is never refused (AEP-0003 §3.5.1), and a
 * hello-less one still is. A stack of its own delays the invocation of every `hello` frame by
 * 1.5 s (AEP_LOCAL_WS_HELLO_DELAY_MS, a cold start of the hello's own invocation) while the frames
 * behind it run at once. Its hello wait is 5 s, so the outcome depends on the mechanism, not on
 * how fast this machine records a hello: the default 1.75 s bound against a hello 1.5 s late is
 * played in virtual time by `test/sim/hello-wait.test.ts`, and the time a hello-less client
 * waits for its refusal is a bench figure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { isType, openSocket, waitForCount } from '../support/ws-client.ts';

const HELLO_DELAY_MS = 1500;
let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_LOCAL_WS_HELLO_DELAY_MS: String(HELLO_DELAY_MS), AEP_HELLO_WAIT_MS: '5000', AEP_DEV_TOKEN: `aep_slow_hello_${process.pid}` } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('a hello invoked 1.5 s late', () => {
  it('honours 50 hello-first pipelined bursts: hello, subscribe, event, subscribe in one tick', async () => {
    const outcomes: Array<{ firstType: unknown; errors: unknown[]; subscribed: number; tookMs: number }> = [];
    // Ten connections at a time: every burst waits out the 1.5 s hello delay.
    for (let round = 0; round < 5; round += 1) {
      outcomes.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, async (_, index) => {
            const burst = `${round}-${index}`;
            const session = uniqueName(`slow-hello-${burst}`);
            const client = await openSocket({ baseUrl: stack.baseUrl, token: stack.devToken });
            const startedAt = Date.now();
            client.send({ type: 'hello', versions: ['0.1'], role: 'both', identity: { agent: 'demo' }, capabilities: {} });
            client.send({ type: 'subscribe', id: `a${burst}`, filter: { session } });
            client.send(sessionEvent(session, 0));
            client.send({ type: 'subscribe', id: `b${burst}`, filter: { type: 'tool.*' } });
            await waitForCount(client, isType('subscribed'), 2, 15_000);
            const outcome = { firstType: client.frames[0]?.type, errors: client.all(isType('error')), subscribed: client.all(isType('subscribed')).length, tookMs: Date.now() - startedAt };
            await client.close();
            return outcome;
          }),
        )),
      );
    }
    expect(outcomes).toHaveLength(50);
    for (const outcome of outcomes) {
      expect(outcome.firstType).toBe('hello');
      expect(outcome.errors).toEqual([]);
      expect(outcome.subscribed).toBe(2);
      // The delay was really there: nothing was answered before the hello ran.
      expect(outcome.tookMs).toBeGreaterThanOrEqual(HELLO_DELAY_MS);
    }
  }, 60_000);

  it('still answers a client whose first frame is an event with hello-required and a close', async () => {
    const client = await openSocket({ baseUrl: stack.baseUrl, token: stack.devToken });
    client.send(sessionEvent(uniqueName('no-hello'), 0));
    expect(await client.next(isType('error'), 15_000)).toMatchObject({ code: 'hello-required' });
    await client.closed;
    expect(client.all(isType('hello'))).toEqual([]);
  });
});
