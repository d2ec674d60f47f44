/**
 * POSTs bridge requests (webhooks, OTLP/HTTP) over keep-alive agents whose connections may
 * reach only addresses the deployment allows (`domain/outbound-address.ts`): an IP literal is checked
 * before connecting, a name on every address it resolves to, at connect time, so a name that
 * resolves (or is re-pointed, DNS rebinding) to loopback, link-local or a private range is
 * refused before a byte is sent. Classifies the answer: no answer, a timeout, 408, 429 and
 * 5xx are worth retrying; any other non-2xx is the receiver refusing the content. A reason
 * names the status alone: never the response body (a tenant reads reasons, and a body is
 * whatever the address answered) and never request headers (they hold the tenant's credentials).
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { disallowedAddress, isAddressLiteral } from '../relay/domain/outbound-address.ts';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import type { HttpDelivery, SendOutcome } from '../relay/bridges/sink-transport-port.ts';

/** Resolves a name to all its addresses (`dns.lookup` by default; tests may point names elsewhere). */
export type Resolver = (hostname: string, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true }, callback);

/**
 * A `lookup` for http(s) agents that refuses, at connect time, a name resolving to any address
 * `addresses` disallows (also used by the JWKS fetcher, `jwks-fetcher.ts`). `who` names the
 * kind of address in the refusal (`sink`, `key set URL`).
 */
export function guardedLookup(addresses: AddressRule, resolver: Resolver, who: string) {
  return (hostname: string, lookupOptions: LookupOptions, callback: (...args: unknown[]) => void): void => {
    resolver(hostname, (error, resolved) => {
      if (error !== null) return callback(error);
      const refused = resolved.map((entry) => disallowedAddress(entry.address, addresses)).find((kind) => kind !== undefined);
      if (refused !== undefined) return callback(new DisallowedAddressError(`the ${who}'s name resolves to a ${refused} address, which ${who}s may not reach`));
      const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined;
      const usable = family === undefined ? resolved : resolved.filter((entry) => entry.family === family);
      if (usable.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      if (lookupOptions.all === true) return callback(null, usable);
      const [first] = usable as [LookupAddress];
      return callback(null, first.address, first.family);
    });
  };
}

/** Raised when a connection would reach a disallowed address. */
export class DisallowedAddressError extends Error {
  override readonly name = 'DisallowedAddressError';
}

export interface SinkPosterOptions {
  addresses: AddressRule;
  resolver?: Resolver;
}

export type HttpPoster = (delivery: HttpDelivery, timeoutMs: number) => Promise<SendOutcome>;

export function httpSinkPoster(options: SinkPosterOptions): HttpPoster {
  // The agent's connections look names up through this, so every new socket is checked.
  const lookup = guardedLookup(options.addresses, options.resolver ?? systemResolver, 'sink');
  const agentOptions = { keepAlive: true, maxSockets: 64, lookup };
  const agents = { 'http:': new HttpAgent(agentOptions as never), 'https:': new HttpsAgent(agentOptions as never) };

  return async (delivery, timeoutMs) => {
    const url = new URL(delivery.url);
    if (isAddressLiteral(url.hostname)) {
      const refused = disallowedAddress(url.hostname, options.addresses);
      if (refused !== undefined) return { ok: false, retryable: false, reason: `the sink names a ${refused} address, which sinks may not reach` };
    }
    const secure = url.protocol === 'https:';
    const body = typeof delivery.body === 'string' ? Buffer.from(delivery.body, 'utf8') : delivery.body;
    const timeout = (): Error => Object.assign(new Error('timeout'), { name: 'TimeoutError' });
    const answer = await new Promise<{ status: number } | { error: Error }>((resolve) => {
      const outgoing = (secure ? httpsRequest : httpRequest)(
        url,
        { method: 'POST', agent: secure ? agents['https:'] : agents['http:'], headers: { ...delivery.headers, 'content-length': String(body.length) } },
        (response: IncomingMessage) => {
          // The body is read (and dropped) so the connection can be reused.
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
          response.on('error', (error) => resolve({ error }));
          // Cut off mid-answer by the time limit: no 'end' comes.
          response.on('close', () => resolve({ error: timeout() }));
        },
      );
      // One limit for the whole exchange, connecting and the answer's body included.
      const timer = setTimeout(() => outgoing.destroy(timeout()), timeoutMs);
      outgoing.on('close', () => clearTimeout(timer));
      outgoing.on('error', (error) => resolve({ error }));
      outgoing.end(body);
    });
    if ('error' in answer) {
      const { error } = answer;
      if (error instanceof DisallowedAddressError) return { ok: false, retryable: false, reason: error.message };
      return { ok: false, retryable: true, reason: error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `could not reach the receiver (${errorCode(error)})` };
    }
    if (answer.status >= 200 && answer.status < 300) return { ok: true };
    const retryable = answer.status === 408 || answer.status === 429 || answer.status >= 500;
    return { ok: false, retryable, reason: `the receiver answered ${answer.status}`, status: answer.status };
  };
}

/** A network error's code (ECONNREFUSED, ENOTFOUND), never its message (which may name addresses). */
function errorCode(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : error.name;
}
