/**
 * A `fetch` for the OpenID Connect libraries (`openid-client`'s and `jose`'s `customFetch`)
 * that reaches only addresses the deployment allows, as sinks and key set URLs do: an IP literal
 * is checked before connecting and a name on every address it resolves to at connect time
 * (`guardedLookup`, DNS-rebinding safe). Bounded in time and size; redirects are handed back
 * unfollowed (the libraries ask for `redirect: 'manual'`).
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { disallowedAddress, isAddressLiteral } from '../relay/domain/outbound-address.ts';
import type { AddressRule } from '../relay/domain/outbound-address.ts';
import { guardedLookup, systemResolver } from './http-sink-poster.ts';
import type { Resolver } from './http-sink-poster.ts';

export const PROVIDER_FETCH_TIMEOUT_MS = 5000;
const MAX_ANSWER_BYTES = 512 * 1024;

export interface GuardedFetchRequest {
  method?: string;
  headers?: Headers | Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

export type GuardedFetch = (url: string, options: GuardedFetchRequest) => Promise<Response>;

export function guardedFetch(options: { addresses: AddressRule; resolver?: Resolver; timeoutMs?: number }): GuardedFetch {
  const lookup = guardedLookup(options.addresses, options.resolver ?? systemResolver, 'identity provider URL');
  const agentOptions = { keepAlive: true, maxSockets: 8, lookup };
  const agents = { http: new HttpAgent(agentOptions as never), https: new HttpsAgent(agentOptions as never) };
  const timeoutMs = options.timeoutMs ?? PROVIDER_FETCH_TIMEOUT_MS;
  return async (target, init) => {
    const url = new URL(target);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isAddressLiteral(host)) {
      const refused = disallowedAddress(host, options.addresses);
      if (refused !== undefined) throw new Error(`the identity provider URL names a ${refused} address, which the relay may not reach`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('the identity provider URL is not http(s)');
    const secure = url.protocol === 'https:';
    const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : { ...(init.headers ?? {}) };
    const body = bodyOf(init.body);
    // A keep-alive socket the provider closed just as it was reused fails before the provider read
    // the request: sent once more, on a new socket (the remedy Node's documentation gives for
    // `request.reusedSocket`), instead of failing the person's sign-in.
    const send = (retryOnReset: boolean): Promise<Response> => new Promise<Response>((resolve, reject) => {
      const outgoing = (secure ? httpsRequest : httpRequest)(url, { method: init.method ?? 'GET', agent: secure ? agents.https : agents.http, headers }, (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_ANSWER_BYTES) {
            outgoing.destroy(new Error(`the identity provider's answer is over ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (value === undefined) continue;
            for (const each of Array.isArray(value) ? value : [value]) answerHeaders.append(name, each);
          }
          const status = response.statusCode ?? 502;
          const noBody = status === 204 || status === 304;
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, headers: answerHeaders }));
        });
        response.on('error', reject);
      });
      const timer = setTimeout(() => outgoing.destroy(new Error(`the identity provider did not answer within ${timeoutMs} ms`)), timeoutMs);
      outgoing.on('close', () => clearTimeout(timer));
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (retryOnReset && outgoing.reusedSocket && error.code === 'ECONNRESET') resolve(send(false));
        else reject(error);
      });
      init.signal?.addEventListener('abort', () => outgoing.destroy(new Error('aborted')), { once: true });
      if (body !== undefined) outgoing.write(body);
      outgoing.end();
    });
    return send(true);
  };
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return Buffer.from(body as ArrayBuffer);
  throw new Error('unsupported request body for the identity provider');
}
