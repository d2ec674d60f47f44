/**
 * A dashboard in a real browser (Debian's Chromium, driven by playwright-core) on another
 * origin than the relay: the page reads discovery, POSTs an event, and receives it on an
 * EventSource opened with `?access_token=` (AEP-0003 §8.1: EventSource cannot set headers)
 * and on a WebSocket, through the local edge with CORS allowing the page's origin. A page on
 * an origin the deployment does not allow cannot read the relay's answers.
 *
 * Chromium: AEP_CHROMIUM, else /usr/bin/chromium (`.ci/run` installs it when missing).
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { sessionEvent, uniqueName } from '../support/relay-fixtures.ts';

const CHROMIUM = process.env.AEP_CHROMIUM ?? '/usr/bin/chromium';

/** Serves one empty HTML page; its origin is what the browser sends as Origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>AEP dashboard</title><p>dashboard</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let stack: StackProcess;
let browser: Browser;
let allowed: { server: Server; origin: string };
let foreign: { server: Server; origin: string };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set AEP_CHROMIUM`);
  allowed = await pageServer();
  foreign = await pageServer();
  stack = await startStackProcess({ env: { AEP_CORS_ORIGINS: allowed.origin } });
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  allowed?.server.close();
  foreign?.server.close();
});

describe('a dashboard on another origin, in Chromium', () => {
  it('reads discovery, posts an event and receives it on an access_token EventSource and on a WebSocket', async () => {
    const page = await browser.newPage();
    await page.goto(`${allowed.origin}/`);
    const session = uniqueName('browser');
    const event = sessionEvent(session, 0, { type: 'progress.status', data: { message: 'from the browser' } });
    const outcome = await page.evaluate(
      async ({ base, token, event }) => {
        const withTimeout = <T,>(promise: Promise<T>, label: string): Promise<T> =>
          Promise.race([promise, new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`timed out: ${label}`)), 15_000))]);
        const discovery = await (await fetch(`${base}/.well-known/aep`, { headers: { authorization: `Bearer ${token}` } })).json();

        const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/socket?access_token=${encodeURIComponent(token)}`);
        const frames: Array<Record<string, unknown>> = [];
        const frameWaiters: Array<{ test: (frame: Record<string, unknown>) => boolean; resolve: (frame: Record<string, unknown>) => void }> = [];
        socket.onmessage = (message) => {
          const frame = JSON.parse(String(message.data)) as Record<string, unknown>;
          frames.push(frame);
          for (const waiter of [...frameWaiters]) if (waiter.test(frame)) waiter.resolve(frame);
        };
        const nextFrame = (test: (frame: Record<string, unknown>) => boolean, label: string) =>
          withTimeout(new Promise<Record<string, unknown>>((resolve) => {
            const seen = frames.find(test);
            if (seen !== undefined) resolve(seen);
            else frameWaiters.push({ test, resolve });
          }), label);
        await withTimeout(new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = () => reject(new Error('socket failed')); }), 'socket open');
        socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} }));
        await nextFrame((frame) => frame.type === 'hello', 'hello');
        socket.send(JSON.stringify({ type: 'subscribe', id: 'dash', filter: { session: event.session } }));
        await nextFrame((frame) => frame.type === 'subscribed', 'subscribed');

        const source = new EventSource(`${base}/stream?access_token=${encodeURIComponent(token)}&filter=${encodeURIComponent(JSON.stringify({ session: event.session }))}`);
        const onSse = new Promise<{ data: string; lastEventId: string }>((resolve) => {
          source.addEventListener(String(event.type), (message) => resolve({ data: (message as MessageEvent).data as string, lastEventId: (message as MessageEvent).lastEventId }));
        });
        await withTimeout(new Promise((resolve, reject) => { source.onopen = resolve; source.onerror = () => reject(new Error('EventSource failed')); }), 'EventSource open');

        const posted = await fetch(`${base}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'aep-version': '0.1' },
          body: JSON.stringify(event),
        });
        const sse = await withTimeout(onSse, 'SSE event');
        const live = await nextFrame((frame) => frame.id === event.id, 'WebSocket event');
        source.close();
        socket.close();
        return { discovery, postStatus: posted.status, sse, live };
      },
      { base: stack.baseUrl, token: stack.devToken, event },
    );
    expect(outcome.discovery).toMatchObject({ aep: ['0.1'], endpoints: { events: '/events', stream: '/stream', socket: '/socket' } });
    expect(outcome.postStatus).toBe(202);
    expect(JSON.parse(outcome.sse.data)).toMatchObject({ id: event.id, session });
    expect(outcome.sse.lastEventId).toBe(`${session}:0:0`);
    expect(outcome.live).toMatchObject({ id: event.id, session });
    await page.close();
  });

  it('keeps the relay unreadable from an origin the deployment does not allow', async () => {
    const page = await browser.newPage();
    await page.goto(`${foreign.origin}/`);
    const outcome = await page.evaluate(async ({ base, token }) => {
      try {
        await fetch(`${base}/.well-known/aep`, { headers: { authorization: `Bearer ${token}` } });
        return 'read';
      } catch (error) {
        return (error as Error).name;
      }
    }, { base: stack.baseUrl, token: stack.devToken });
    expect(outcome).toBe('TypeError');
    await page.close();
  });
});
