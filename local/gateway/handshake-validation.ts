/**
 * Checks a WebSocket opening handshake (RFC 6455 §4.2.1) before anything runs for it, as API
 * Gateway does: a request the upgrade would refuse must never reach the authorizer or
 * `$connect`, or `$connect` takes a quota slot for a socket that never opens and whose
 * `$disconnect` therefore never runs. The rules are the ones the `ws` server applies when it
 * completes the upgrade, so nothing that passes here is refused there.
 */
import type { IncomingMessage } from 'node:http';

/** The Sec-WebSocket-Key is the base64 of a 16-byte nonce. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
/** A subprotocol name is an HTTP token (RFC 7230 §3.2.6). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** What is wrong with the handshake, or undefined when it is one the upgrade completes. */
export function handshakeProblem(request: IncomingMessage): string | undefined {
  if (request.method !== 'GET') return 'the opening handshake is a GET';
  if (request.headers.upgrade?.toLowerCase() !== 'websocket') return 'Upgrade: websocket is missing';
  const key = request.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !KEY.test(key)) return 'Sec-WebSocket-Key is missing or not the base64 of 16 bytes';
  if (request.headers['sec-websocket-version'] !== '13') return 'Sec-WebSocket-Version must be 13';
  const protocols = request.headers['sec-websocket-protocol'];
  if (protocols !== undefined && !isProtocolList(protocols)) return 'Sec-WebSocket-Protocol is not a list of distinct tokens';
  return undefined;
}

function isProtocolList(header: string): boolean {
  const names = header.split(',').map((name) => name.trim());
  return names.every((name) => TOKEN.test(name)) && new Set(names).size === names.length;
}
