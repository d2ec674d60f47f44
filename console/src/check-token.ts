/**
 * Whether the relay accepts a token: the WebSocket `$connect` authorizer refuses an unknown,
 * revoked or expired token before the socket opens (AEP-0003 §8.1), and a valid one gets the
 * relay's `hello` back. The socket is closed at once either way.
 */
import { RelayClient } from './relay-client.ts';

export type TokenVerdict = 'accepted' | 'refused' | 'unreachable';

export function checkToken(token: string, timeoutMs = 10_000): Promise<TokenVerdict> {
  return new Promise((resolve) => {
    const socket = new WebSocket(new RelayClient(token).urlWithToken('/socket', {}, 'ws'));
    let opened = false;
    const settle = (verdict: TokenVerdict) => {
      clearTimeout(timer);
      socket.onclose = null;
      socket.close();
      resolve(verdict);
    };
    const timer = setTimeout(() => settle('unreachable'), timeoutMs);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: 'console' } }));
    };
    socket.onmessage = (message) => {
      if (String(message.data).includes('"hello"')) settle('accepted');
    };
    // A browser learns nothing about a refused handshake but that it closed before opening.
    socket.onclose = () => settle(opened ? 'unreachable' : 'refused');
  });
}
