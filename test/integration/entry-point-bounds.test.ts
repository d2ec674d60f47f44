/**
 * Entry-point bounds: the per-connection frame budget (AEP_SOCKET_FRAMES_PER_SECOND /
 * AEP_SOCKET_FRAME_BURST), refusals that cost no DynamoDB write, and bad tokens that cost no
 * read (or one per instance and minute): a stack of the test's own, run in this process so its
 * usage counters (every DynamoDB call each function made, refused conditional writes
 * included) can be read between steps.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentSnapshot } from '../support/environment-snapshot.ts';
import { startStack } from '../../local/stack.ts';
import type { RunningStack } from '../../local/stack.ts';
import { postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, waitForCount } from '../support/ws-client.ts';

const FRAMES_PER_SECOND = 2;
const FRAME_BURST = 8;
const MAX_SUBSCRIPTIONS = 2;

let stack: RunningStack;

/** This file's stack runs in its own process and writes its settings into the environment. */
const environment = environmentSnapshot();

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    inMemory: true,
    dataDir: mkdtempSync(join(tmpdir(), 'aep-frame-budget-')),
    env: {
      AEP_SOCKET_FRAMES_PER_SECOND: String(FRAMES_PER_SECOND),
      AEP_SOCKET_FRAME_BURST: String(FRAME_BURST),
      AEP_MAX_SUBSCRIPTIONS: String(MAX_SUBSCRIPTIONS),
      AEP_LOCAL_POLL_MS: '50',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  environment.restore();
});

const options = () => ({ baseUrl: stack.baseUrl, token: stack.devToken });
const socketUsage = () => stack.usage().functions.socket;
const httpUsage = () => stack.usage().functions.http;
const overBudget = (frame: Record<string, any>) => frame.type === 'error' && frame.code === 'limit-exceeded' && /frames per second/.test(String(frame.detail));

describe('the per-connection frame budget', () => {
  it('answers frames over the budget with limit-exceeded before any DynamoDB call, and leaves the connection and its subscription working', async () => {
    const session = uniqueName('budget');
    const consumer = await helloSocket({}, options());
    consumer.send({ type: 'subscribe', id: 'kept', filter: { session } });
    await consumer.next((frame) => frame.type === 'subscribed' && frame.id === 'kept');
    // The subscription's handoff to live writes after its `subscribed` reply: let it finish.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // hello and subscribe took 2 of the burst: a flood of 60 frames finds the rest.
    stack.resetUsage();
    const flood = 60;
    for (let index = 0; index < flood; index += 1) consumer.send({ type: 'ping', t: index });
    await waitForCount(consumer, (frame) => frame.type === 'pong' || overBudget(frame), flood, 20_000);
    const pongs = consumer.all(isType('pong')).length;
    const refused = consumer.all(overBudget).length;
    const usage = socketUsage();
    console.log(`frame budget: ${flood} pings, ${pongs} answered, ${refused} refused over budget; the socket function made ${usage.dynamoCalls} DynamoDB calls (${usage.writeUnits} WRU)`);
    expect(refused).toBeGreaterThanOrEqual(flood - FRAME_BURST - 5);
    // One connection-record read per frame handled; none for a refused one, and no write at all.
    expect(usage.dynamoCalls).toBeLessThanOrEqual(pongs);
    expect(usage.writeUnits).toBe(0);
    // The refusals named the frame they refused.
    expect(consumer.all(overBudget).every((frame) => frame.id === undefined)).toBe(true);
    // Undisturbed: once the bucket refills, the connection is served and the subscription delivers.
    await new Promise((resolve) => setTimeout(resolve, (FRAME_BURST / FRAMES_PER_SECOND) * 1000 + 200));
    expect((await postEvents(JSON.stringify(sessionEvent(session, 0)), options())).status).toBe(202);
    await consumer.next((frame) => frame.session === session && frame.seq === 0);
    consumer.send({ type: 'ping', t: 'after' });
    await consumer.next((frame) => frame.type === 'pong' && frame.t === 'after');
    await consumer.close();
  }, 60_000);

  it('refuses a subscribe over the subscription limit, or with an invalid filter, without a write', async () => {
    const session = uniqueName('limit');
    const consumer = await helloSocket({}, options());
    consumer.send({ type: 'subscribe', id: 'one', filter: { session } });
    await consumer.next((frame) => frame.type === 'subscribed' && frame.id === 'one');
    consumer.send({ type: 'subscribe', id: 'two', filter: { type: ['tool.*'] } });
    await consumer.next((frame) => frame.type === 'subscribed' && frame.id === 'two');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stack.resetUsage();
    consumer.send({ type: 'subscribe', id: 'three', filter: { session } });
    const refusal = await consumer.next((frame) => frame.type === 'error' && frame.id === 'three');
    expect(refusal).toMatchObject({ code: 'limit-exceeded' });
    expect(String(refusal.detail)).toMatch(/at most 2 subscriptions/);
    consumer.send({ type: 'subscribe', id: 'bad', filter: { seq: 3 } });
    expect(await consumer.next((frame) => frame.type === 'error' && frame.id === 'bad')).toMatchObject({ code: 'invalid-filter' });
    const tooMany = Array.from({ length: 40 }, (_, index) => `c${index}.*`);
    consumer.send({ type: 'subscribe', id: 'wide', filter: { type: tooMany } });
    const wide = await consumer.next((frame) => frame.type === 'error' && frame.id === 'wide');
    expect(wide).toMatchObject({ code: 'limit-exceeded' });
    expect(String(wide.detail)).toMatch(/at most 32 sessions or type categories/);
    const usage = socketUsage();
    console.log(`three refused subscribes: ${usage.dynamoCalls} DynamoDB calls, ${usage.readUnits} RRU, ${usage.writeUnits} WRU`);
    // Reads only (the connection record, and whether id `three` is held): the refused
    // conditional write of the old path would be counted here as a call with no units.
    expect(usage.writeUnits).toBe(0);
    expect(usage.dynamoCalls).toBeLessThanOrEqual(2 + 1 + 1);
    // A replacement of a held id at the limit is still allowed, and the others are undisturbed.
    consumer.send({ type: 'subscribe', id: 'one', filter: { session } });
    await waitForCount(consumer, (frame) => frame.type === 'subscribed' && frame.id === 'one', 2);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await postEvents(JSON.stringify(sessionEvent(session, 0)), options())).status).toBe(202);
    await consumer.next((frame) => frame.session === session && frame.seq === 0);
    await consumer.close();
  }, 60_000);
});

describe('unauthenticated requests', () => {
  const post = (authorization?: string) =>
    fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'aep-version': '0.1', ...(authorization === undefined ? {} : { authorization }) }, body: JSON.stringify(sessionEvent(uniqueName('anon'), 0)) });

  it('refuses a request with no token, or a malformed one, with 401 before any DynamoDB read', async () => {
    stack.resetUsage();
    for (const authorization of [undefined, 'Bearer', 'Bearer not-a-token', 'Basic dXNlcjpwYXNz', `Bearer aep_${'x'.repeat(200)}`, 'Bearer aep_has spaces']) {
      const response = await post(authorization);
      expect(response.status, String(authorization)).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'unauthenticated' });
    }
    expect(httpUsage()).toMatchObject({ invocations: 6, dynamoCalls: 0 });
  });

  it('reads a well-formed unknown token once, then refuses it from memory', async () => {
    const unknown = `Bearer aep_${'y'.repeat(43)}`;
    stack.resetUsage();
    for (let attempt = 0; attempt < 10; attempt += 1) expect((await post(unknown)).status).toBe(401);
    expect(httpUsage()).toMatchObject({ invocations: 10, dynamoCalls: 1 });
    // A good token is unaffected.
    expect((await post(`Bearer ${stack.devToken}`)).status).toBe(202);
  });
});
