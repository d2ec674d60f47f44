/**
 * Work left running for clients that left, and slots held by upgrades that never opened (issue
 * 46, points 4 and 5), on a stack of its own: a stream whose client has gone ends at its next
 * write or poll (here at once: the local gateway tells the function its client left) and frees
 * its slot; a handshake that does not arrive whole within the gateway's bound
 * (`HANDSHAKE_BOUND_MS`, 10 s) is cut; and a burst of upgrades refused or abandoned mid-way
 * leaves the tenant every one of its slots.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { HANDSHAKE_BOUND_MS } from '../../local/gateway/server.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';

const QUOTA = 20;
const STREAMS = 5;
let stack: StackProcess;
let tenantToken: string;

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${stack.baseUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${stack.devToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

beforeAll(async () => {
  // Streams end idle only after 5 minutes here: what frees their slots below is their clients leaving.
  stack = await startStackProcess({ env: { AEP_SSE_MAX_LIVE_STREAMS: String(STREAMS), AEP_SSE_MAX_STREAMS_PER_TENANT: '0', AEP_SSE_IDLE_END_MS: '300000' } });
  const tenant = uniqueName('leftover');
  expect((await admin('POST', '/tenants', { tenant })).status).toBe(201);
  const issued = await admin('POST', '/tokens', { tenant, scopes: ['emit', 'consume'] });
  tenantToken = ((await issued.json()) as { token: string }).token;
  expect((await admin('PUT', `/quotas?tenant=${tenant}`, { maxConnections: QUOTA })).status).toBe(200);
});

afterAll(async () => {
  await stack?.stop();
});

/** Opens a WebSocket of the tenant: its handshake status (101 when it opened). */
function upgrade(token: string): Promise<{ status: number; socket?: WebSocket }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${stack.baseUrl.replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${token}` } });
    socket.once('open', () => resolve({ status: 101, socket }));
    socket.once('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      response.resume();
    });
    socket.once('error', () => resolve({ status: 0 }));
  });
}

/** Sends raw bytes of an upgrade request and resolves once the server closed the connection, with what it answered. */
function rawUpgrade(send: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(stack.baseUrl).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(answer));
    socket.once('connect', () => send(socket));
  });
}

describe('work left running for clients that left', () => {
  it("ends the streams of clients that closed them and gives their slots back", async () => {
    const options = { token: stack.devToken, baseUrl: stack.baseUrl };
    const first = await Promise.all(Array.from({ length: STREAMS }, () => openStream({}, options)));
    expect(first.map((stream) => stream.status)).toEqual(Array(STREAMS).fill(200));
    expect((await openStream({}, options)).status).toBe(503);
    for (const stream of first) stream.close();
    // Every slot comes back long before the streams' idle end (5 min): their clients left.
    await expect
      .poll(async () => {
        const again = await Promise.all(Array.from({ length: STREAMS }, () => openStream({}, options)));
        for (const stream of again) stream.close();
        return again.filter((stream) => stream.status === 200).length;
      })
      .toBe(STREAMS);
  });

  it(`cuts a handshake whose request does not arrive whole within ${HANDSHAKE_BOUND_MS / 1000} s (slowloris), and serves on`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        rawUpgrade((socket) => {
          socket.write(`GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n`);
          // One more header line every second, never the blank line that ends the request.
          let line = 0;
          const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(`X-Drip-${line++}: 1\r\n`)), 1_000);
          socket.once('close', () => clearInterval(drip));
        }),
      ),
    );
    for (const answer of answers) expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
    const opened = await upgrade(tenantToken);
    expect(opened.status).toBe(101);
    opened.socket?.close();
  }, 60_000);

  it('leaves the tenant all its slots after a burst of 400 refused or abandoned upgrades', async () => {
    const key = Buffer.alloc(16, 7).toString('base64');
    const kinds = [
      // Refused by the gateway before any route runs.
      `GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: ${key}\r\nAuthorization: Bearer ${tenantToken}\r\n\r\n`,
      `GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${tenantToken}\r\n\r\n`,
      // Refused by the authorizer.
      `GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nAuthorization: Bearer aep_${'x'.repeat(43)}\r\n\r\n`,
      // Valid, then abandoned by the client while $connect runs.
      `GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nAuthorization: Bearer ${tenantToken}\r\n\r\n`,
    ];
    for (let wave = 0; wave < 4; wave += 1) {
      await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          rawUpgrade((socket) => {
            const kind = index % kinds.length;
            socket.write(kinds[kind] as string);
            if (kind === kinds.length - 1) setTimeout(() => socket.destroy(), 1);
          }),
        ),
      );
    }
    // After the burst every one of the tenant's slots can be taken. An upgrade the relay is too
    // busy for is told so (503 with Retry-After) and tried again; a 429 is a slot still held,
    // which the burst's last abandoned upgrades may do for a moment (their $disconnect runs after
    // their $connect), and a leaked one for good: tried again until the poll's 20 s run out.
    const statuses: number[] = [];
    const sockets: WebSocket[] = [];
    const giveUpAt = Date.now() + 20_000;
    while (sockets.length < QUOTA && Date.now() < giveUpAt) {
      const { status, socket } = await upgrade(tenantToken);
      statuses.push(status);
      if (socket !== undefined) sockets.push(socket);
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(sockets).toHaveLength(QUOTA);
    expect(statuses.filter((status) => ![101, 429, 503].includes(status))).toEqual([]);
    for (const socket of sockets) socket.close();
  }, 120_000);
});
