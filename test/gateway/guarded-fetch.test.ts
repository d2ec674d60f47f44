import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/gateway/guarded-fetch.ts';

/**
 * A provider that ends a kept-alive connection as its next request arrives, unread: what a client
 * meets when the provider's idle timeout closes the socket just as the client reuses it.
 */
let resetReused = true;
let requests = 0;
const requestsOnSocket = new WeakMap<Socket, number>();
const server = createServer((request, response) => {
  requests += 1;
  const onSocket = (requestsOnSocket.get(request.socket) ?? 0) + 1;
  requestsOnSocket.set(request.socket, onSocket);
  if (resetReused && onSocket > 1) return void request.socket.destroy();
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the identity provider fetch', () => {
  it('sends a request once more on a new socket when a reused keep-alive socket is reset, and only then', async () => {
    const fetchGuarded = guardedFetch({ addresses: { allowLoopback: true } });
    requests = 0;
    expect((await fetchGuarded(url, { method: 'POST', body: 'code=a' })).status).toBe(200);
    // The second request goes out on the kept-alive socket, which the provider resets unread.
    const second = await fetchGuarded(url, { method: 'POST', body: 'code=b' });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ ok: true });
    expect(requests).toBe(3);
  });

  it('fails a reset of a socket it did not reuse, without sending again', async () => {
    const fetchGuarded = guardedFetch({ addresses: { allowLoopback: true } });
    requests = 0;
    resetReused = false;
    const resetAll = createServer((request) => {
      requests += 1;
      request.socket.destroy();
    });
    await new Promise<void>((resolve) => resetAll.listen(0, '127.0.0.1', resolve));
    try {
      await expect(fetchGuarded(`http://127.0.0.1:${(resetAll.address() as AddressInfo).port}/token`, { method: 'POST', body: 'code=c' })).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(requests).toBe(1);
    } finally {
      await new Promise<void>((resolve) => resetAll.close(() => resolve()));
      resetReused = true;
    }
  });
});
