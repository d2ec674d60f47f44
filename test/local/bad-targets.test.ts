/**
 * One unauthenticated request with a `Host` or target no URL can be made of must not stop the
 * local gateway (it did: `new URL` threw outside any handler). Each is answered 400, on a plain
 * request and on a `/socket` upgrade, and the stack serves on. Raw TCP, since HTTP clients
 * refuse to send such requests.
 */
import { connect } from 'node:net';
import { describe, expect, inject, it } from 'vitest';

/** Sends one raw request and answers the status line of the reply. */
function rawRequest(request: string): Promise<string> {
  const { hostname, port } = new URL(inject('baseUrl'));
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let reply = '';
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) {
        resolve(reply.split('\r\n')[0] as string);
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(reply.split('\r\n')[0] ?? ''));
  });
}

const hosts = ['a b', '%', '[::', 'a:99999'];

describe('the local gateway under malformed targets', () => {
  it('answers 400 to a Host no URL can be made of, on any path and on a /socket upgrade, and keeps serving', async () => {
    for (const host of hosts) {
      expect(await rawRequest(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`), `Host: ${host}`).toMatch(/^HTTP\/1\.1 400/);
      expect(await rawRequest(`GET /socket HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`), `upgrade, Host: ${host}`).toMatch(/^HTTP\/1\.1 400/);
    }
    expect(await rawRequest('GET http://[/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    const healthy = await fetch(`${inject('baseUrl')}/healthz`);
    expect(healthy.status).toBe(200);
  });
});
