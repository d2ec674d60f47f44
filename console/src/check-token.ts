/**
 * Whether the relay accepts a token, and if not, why, in words. The check is the console's own
 * first step: open the WebSocket with the token and say the console's consumer `hello`
 * (`live-socket.ts`). The `$connect` authorizer refuses an unknown, revoked or expired token
 * before the socket opens (AEP-0003 §8.1; a browser learns only that it closed before opening);
 * a token the relay takes but whose hello it refuses gets an `error` frame, whose code and
 * detail are the reason (e.g. `unauthorized`); a valid one gets the relay's `hello` back.
 * "Unreachable" is kept for a relay that never answered. The socket is closed at once.
 */
import { CONSOLE_HELLO } from './live-socket.ts';
import { RelayClient } from './relay-client.ts';

export type TokenVerdict = { verdict: 'accepted' } | { verdict: 'refused'; reason: string } | { verdict: 'unreachable'; reason: string };

export const HANDSHAKE_REFUSED = 'The relay did not accept this token (it may be mistyped, revoked or expired).';

export function checkToken(token: string, timeoutMs = 10_000): Promise<TokenVerdict> {
  return new Promise((resolve) => {
    const socket = new WebSocket(new RelayClient(token).urlWithToken('/socket', {}, 'ws'));
    let opened = false;
    let settled = false;
    const settle = (verdict: TokenVerdict) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.onclose = null;
      socket.close();
      resolve(verdict);
    };
    const timer = setTimeout(() => settle({ verdict: 'unreachable', reason: 'The relay could not be reached; try again.' }), timeoutMs);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify(CONSOLE_HELLO));
    };
    socket.onmessage = (message) => {
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(String(message.data)) as Record<string, unknown>;
      } catch {
        return;
      }
      if (frame.type === 'hello') settle({ verdict: 'accepted' });
      else if (frame.type === 'error') settle({ verdict: 'refused', reason: helloRefusalInWords(frame) });
    };
    socket.onclose = (close) => {
      if (!opened) return settle({ verdict: 'refused', reason: HANDSHAKE_REFUSED });
      const why = close.reason === '' ? `close code ${close.code}` : `${close.reason}, close code ${close.code}`;
      settle({ verdict: 'refused', reason: `The relay closed the connection before answering (${why}).` });
    };
  });
}

function helloRefusalInWords(frame: Record<string, unknown>): string {
  const code = typeof frame.code === 'string' ? frame.code : 'error';
  const detail = typeof frame.detail === 'string' && frame.detail !== '' ? `: ${frame.detail}` : '';
  return `The relay refused the connection (${code}${detail}).`;
}
