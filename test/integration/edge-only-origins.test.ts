/**
 * The origins answer only the edge (issue 27 item 5): the local stack's edge adds the origin
 * secret header to what it sends to the HTTP API and the WebSocket API, as CloudFront's origin
 * custom header does, and the same handlers reached on the origin listener (the stand-in for
 * the public execute-api URLs) without it refuse, before any token is read. A stack of the
 * test's own, in this process, so its DynamoDB usage can be read between steps.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentSnapshot } from '../support/environment-snapshot.ts';
import { startStack } from '../../local/stack.ts';
import type { RunningStack } from '../../local/stack.ts';
import { ORIGIN_VERIFY_HEADER } from '../../src/auth/origin-verify.ts';
import { EDGE_ONLY_DETAIL } from '../../src/middleware/origin-guard.ts';
import { ndjson, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket } from '../support/ws-client.ts';

let stack: RunningStack;

/** This file's stack runs in its own process and writes its settings into the environment. */
const environment = environmentSnapshot();

beforeAll(async () => {
  stack = await startStack({ port: 0, inMemory: true, dataDir: mkdtempSync(join(tmpdir(), 'aep-edge-only-')) });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  environment.restore();
});

const dynamoCalls = (name: 'http' | 'authorizer') => stack.usage().functions[name].dynamoCalls;

/** The status an upgrade is answered with, or 101 when the socket opened. */
function handshakeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('error', (error) => reject(error));
  });
}

describe('origins that answer only the edge', () => {
  it('serves HTTP and WebSocket requests through the edge, which adds the origin header', async () => {
    const health = await fetch(`${stack.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    const posted = await fetch(`${stack.baseUrl}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.devToken}`, 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
      body: ndjson([sessionEvent(uniqueName('edge'), 1)]),
    });
    expect(posted.status).toBe(202);
    const socket = await helloSocket({}, { baseUrl: stack.baseUrl, token: stack.devToken });
    socket.close();
  });

  it('refuses an HTTP request on the origin without the header: 403 with a JSON body, no token read', async () => {
    stack.resetUsage();
    const response = await fetch(`${stack.originUrl}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.devToken}`, 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
      body: ndjson([sessionEvent(uniqueName('bypass'), 1)]),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(await response.json()).toEqual({ error: 'unauthorized', detail: EDGE_ONLY_DETAIL });
    const health = await fetch(`${stack.originUrl}/healthz`);
    expect(health.status).toBe(403);
    expect(dynamoCalls('http')).toBe(0);
  });

  it('refuses a guessed header value on the origin, and a viewer cannot set the header through the edge', async () => {
    const guessed = await fetch(`${stack.originUrl}/healthz`, { headers: { [ORIGIN_VERIFY_HEADER]: 'guess' } });
    expect(guessed.status).toBe(403);
    // Through the edge a viewer's own value is replaced by the edge's.
    const viaEdge = await fetch(`${stack.baseUrl}/healthz`, { headers: { [ORIGIN_VERIFY_HEADER]: 'guess' } });
    expect(viaEdge.status).toBe(200);
  });

  it('denies a WebSocket handshake on the origin without the header (403), before any token read; the edge still opens it', async () => {
    stack.resetUsage();
    const origin = stack.originUrl.replace(/^http/, 'ws');
    expect(await handshakeStatus(`${origin}/socket`, { authorization: `Bearer ${stack.devToken}` })).toBe(403);
    expect(await handshakeStatus(`${origin}/socket`, { authorization: `Bearer ${stack.devToken}`, [ORIGIN_VERIFY_HEADER]: 'guess' })).toBe(403);
    expect(stack.usage().functions.authorizer.invocations).toBe(2);
    expect(dynamoCalls('authorizer')).toBe(0);
    expect(stack.usage().functions.socket.invocations).toBe(0);
    const edge = stack.baseUrl.replace(/^http/, 'ws');
    expect(await handshakeStatus(`${edge}/socket`, { authorization: `Bearer ${stack.devToken}`, [ORIGIN_VERIFY_HEADER]: 'guess' })).toBe(101);
  });
});
