/**
 * Fetches an operator's JWKS URL (`relay/identity/operator-keys.ts` caches the answer) under the
 * sinks' address rules: an IP literal is checked before connecting and a name on every address
 * it resolves to at connect time (`guardedLookup`), so a key set URL cannot be aimed at the
 * instance metadata service, loopback (outside the local stack) or private ranges. Bounded in
 * time and size; redirects are not followed (a redirect could lead anywhere). A reason names
 * the status or the network error's code, never the body.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { disallowedAddress, isAddressLiteral } from '../relay/domain/outbound-address.ts';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import { maxAgeOf } from '../relay/identity/operator-keys.ts';
import { MAX_KEY_SET_BYTES } from '../relay/identity/key-sets.ts';
import type { JwksFetch, JwksFetcher } from '../relay/ports/operators.ts';
import { DisallowedAddressError, guardedLookup, systemResolver } from './http-sink-poster.ts';
import type { Resolver } from './http-sink-poster.ts';

/** A hello waits on this at most once per key set per cache period: short, since the hello waits. */
export const JWKS_FETCH_TIMEOUT_MS = 3000;

export function jwksFetcher(options: { addresses: AddressRule; resolver?: Resolver; timeoutMs?: number }): JwksFetcher {
  const lookup = guardedLookup(options.addresses, options.resolver ?? systemResolver, 'key set URL');
  const agentOptions = { keepAlive: true, maxSockets: 16, lookup };
  const agents = { 'http:': new HttpAgent(agentOptions as never), 'https:': new HttpsAgent(agentOptions as never) };
  const timeoutMs = options.timeoutMs ?? JWKS_FETCH_TIMEOUT_MS;
  return async (target) => {
    const url = new URL(target);
    if (isAddressLiteral(url.hostname)) {
      const refused = disallowedAddress(url.hostname, options.addresses);
      if (refused !== undefined) return { ok: false, reason: `the key set URL names a ${refused} address, which key set URLs may not reach` };
    }
    const secure = url.protocol === 'https:';
    return new Promise<JwksFetch>((resolve) => {
      const outgoing = (secure ? httpsRequest : httpRequest)(url, { method: 'GET', agent: secure ? agents['https:'] : agents['http:'], headers: { accept: 'application/json' } }, (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          response.resume();
          return resolve({ ok: false, reason: `the key set URL answered ${status}` });
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_KEY_SET_BYTES) {
            outgoing.destroy();
            return resolve({ ok: false, reason: `the key set is over ${MAX_KEY_SET_BYTES} bytes` });
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const maxAgeSeconds = maxAgeOf(headerOf(response.headers['cache-control']));
          resolve({ ok: true, body: Buffer.concat(chunks).toString('utf8'), ...(maxAgeSeconds === undefined ? {} : { maxAgeSeconds }) });
        });
        response.on('error', () => resolve({ ok: false, reason: 'the answer was cut off' }));
      });
      const timer = setTimeout(() => outgoing.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), timeoutMs);
      outgoing.on('close', () => clearTimeout(timer));
      outgoing.on('error', (error) => {
        if (error instanceof DisallowedAddressError) return resolve({ ok: false, reason: error.message });
        const code = (error as NodeJS.ErrnoException).code;
        resolve({ ok: false, reason: error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `could not reach it (${typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : error.name})` });
      });
      outgoing.end();
    });
  };
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
