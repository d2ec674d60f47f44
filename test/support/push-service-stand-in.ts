/**
 * A local push service standing in for FCM, Mozilla's autopush or Apple's (RFC 8030): it hands
 * out subscriptions the way a browser's `pushManager.subscribe` does (an endpoint, and the
 * P-256 and auth keys the browser would keep), and for every message it receives it checks the
 * VAPID signature (RFC 8292: an ES256 JWT for this origin, under the `k` key the relay
 * publishes) and decrypts the payload with the subscription's private key (RFC 8291, through
 * `http_ece`, the reference implementation), as the browser would. Each endpoint answers as the
 * test chooses: accept (201), gone (410), or never.
 */
import { createECDH, randomBytes } from 'node:crypto';
import type { ECDH } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decrypt } from 'http_ece';
import { decodeJwt, importJWK, jwtVerify } from 'jose';

export type EndpointBehaviour = 'accept' | 'gone' | 'never';

export interface StandInSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  endpoint: string;
  headers: IncomingHttpHeaders;
  /** The VAPID public key the message was signed with (`k`). */
  vapidKey: string;
  /** The decrypted payload, as text and parsed. */
  text: string;
  payload: Record<string, unknown>;
}

/** What happened, in order: the isolation test reads the order, never the clock. */
export type StandInLogEntry = { what: 'received' | 'held' | 'abandoned' | 'refused'; endpoint: string };

export interface PushServiceStandIn {
  origin: string;
  subscribe(name: string, behaviour?: EndpointBehaviour): StandInSubscription;
  setBehaviour(name: string, behaviour: EndpointBehaviour): void;
  /** Messages that passed the VAPID check and decrypted. */
  received: ReceivedPush[];
  /** Messages refused (bad signature, undecryptable), with why. */
  refusals: string[];
  log: StandInLogEntry[];
  waitFor(predicate: () => boolean, what: string): Promise<void>;
  close(): Promise<void>;
}

interface Holder {
  behaviour: EndpointBehaviour;
  ecdh: ECDH;
  auth: Buffer;
}

export async function startPushServiceStandIn(): Promise<PushServiceStandIn> {
  const holders = new Map<string, Holder>();
  const received: ReceivedPush[] = [];
  const refusals: string[] = [];
  const log: StandInLogEntry[] = [];
  const held = new Set<ServerResponse>();
  let origin = '';

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const endpoint = `${origin}${request.url ?? ''}`;
      const holder = holders.get(endpoint);
      if (holder === undefined) return void response.writeHead(404).end();
      void check(endpoint, holder, request.headers, Buffer.concat(chunks)).then(
        (push) => {
          if (holder.behaviour === 'never') {
            // Holds the request open and answers nothing: a push service that never answers.
            log.push({ what: 'held', endpoint });
            held.add(response);
            response.on('close', () => {
              held.delete(response);
              log.push({ what: 'abandoned', endpoint });
            });
            return;
          }
          if (holder.behaviour === 'gone') {
            log.push({ what: 'refused', endpoint });
            return void response.writeHead(410).end();
          }
          received.push(push);
          log.push({ what: 'received', endpoint });
          response.writeHead(201, { location: `${endpoint}/m/${received.length}` }).end();
        },
        (error: unknown) => {
          refusals.push(error instanceof Error ? error.message : String(error));
          response.writeHead(400).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function check(endpoint: string, holder: Holder, headers: IncomingHttpHeaders, body: Buffer): Promise<ReceivedPush> {
    const authorization = headers.authorization ?? '';
    const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization);
    if (match === null) throw new Error(`no VAPID authorization (RFC 8292 §3): ${authorization.slice(0, 20)}`);
    const [, jwt, key] = match as unknown as [string, string, string];
    const point = Buffer.from(key, 'base64url');
    if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
    const publicKey = await importJWK({ kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, 'ES256');
    // RFC 8292 §2: signed by k, audience = the push resource's origin, expiry within 24 h, a contact.
    const { payload } = await jwtVerify(jwt, publicKey, { algorithms: ['ES256'], audience: new URL(endpoint).origin });
    const claims = decodeJwt(jwt);
    if (typeof claims.exp !== 'number' || claims.exp > Date.now() / 1000 + 24 * 3600) throw new Error('exp is absent or more than 24 h ahead');
    if (typeof payload.sub !== 'string' || !/^(?:mailto:|https:)/.test(payload.sub)) throw new Error('sub is not a mailto: or https: contact');
    if (headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${String(headers['content-encoding'])}, not aes128gcm (RFC 8291 §4)`);
    if (headers.ttl === undefined) throw new Error('no TTL header (RFC 8030 §5.2)');
    const text = decrypt(body, { version: 'aes128gcm', privateKey: holder.ecdh, authSecret: holder.auth }).toString('utf8');
    return { endpoint, headers, vapidKey: key, text, payload: JSON.parse(text) as Record<string, unknown> };
  }

  return {
    origin,
    subscribe(name, behaviour = 'accept') {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const endpoint = `${origin}/push/${name}`;
      holders.set(endpoint, { behaviour, ecdh, auth });
      return { endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } };
    },
    setBehaviour(name, behaviour) {
      const holder = holders.get(`${origin}/push/${name}`);
      if (holder !== undefined) holder.behaviour = behaviour;
    },
    received,
    refusals,
    log,
    async waitFor(predicate, what) {
      const deadline = Date.now() + 15_000;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`push service stand-in: ${what} did not happen; refusals: ${JSON.stringify(refusals)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: async () => {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
