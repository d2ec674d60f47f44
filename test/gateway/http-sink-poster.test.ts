/**
 * The sink poster's address guard against a real local receiver: with loopback not allowed (a
 * deployed stack) a name that resolves to 127.0.0.1 (`localhost`, or any name a resolver points
 * there) is refused at connect time and the receiver gets nothing; with loopback allowed (the
 * local stack) the same post arrives. A refusal's reason is the status alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpSinkPoster } from '../../src/gateway/http-sink-poster.ts';
import type { Resolver } from '../../src/gateway/http-sink-poster.ts';
import { startReceiver } from '../support/http-receiver.ts';
import type { HttpReceiver } from '../support/http-receiver.ts';

let receiver: HttpReceiver;
let port: string;

beforeAll(async () => {
  receiver = await startReceiver();
  port = new URL(receiver.url).port;
});
afterAll(() => receiver.close());

const delivery = (host: string) => ({ url: `http://${host}:${port}/hook`, headers: { 'content-type': 'application/json' }, body: '[]' });
/** A resolver that points a public-looking name at loopback, as a rebinding DNS answer would. */
const rebinding: Resolver = (hostname, callback) => (hostname === 'sink.example.com' ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []));

describe('http sink poster address guard', () => {
  it('refuses, at connect time, a name that resolves to loopback when loopback is not allowed', async () => {
    const before = receiver.requests.length;
    const deployed = httpSinkPoster({ addresses: { allowLoopback: false } });
    const byLocalhost = await deployed(delivery('localhost'), 2000);
    expect(byLocalhost).toEqual({ ok: false, retryable: false, reason: "the sink's name resolves to a loopback address, which sinks may not reach" });
    const rebound = await httpSinkPoster({ addresses: { allowLoopback: false }, resolver: rebinding })(delivery('sink.example.com'), 2000);
    expect(rebound).toMatchObject({ ok: false, retryable: false, reason: expect.stringContaining('loopback') });
    expect(await deployed(delivery('127.0.0.1'), 2000)).toMatchObject({ ok: false, retryable: false, reason: 'the sink names a loopback address, which sinks may not reach' });
    expect(await deployed(delivery('[::ffff:127.0.0.1]'), 2000)).toMatchObject({ ok: false, retryable: false });
    expect(receiver.requests.length).toBe(before);
  });

  it('posts to loopback where loopback is allowed, and names a refusal by its status alone', async () => {
    const local = httpSinkPoster({ addresses: { allowLoopback: true }, resolver: rebinding });
    receiver.respondWith(() => 200);
    expect(await local(delivery('sink.example.com'), 2000)).toEqual({ ok: true });
    receiver.respondWith(() => 503);
    // The receiver's body ({"error":"receiver down"}) is never part of the reason.
    expect(await local(delivery('127.0.0.1'), 2000)).toEqual({ ok: false, retryable: true, status: 503, reason: 'the receiver answered 503' });
    receiver.respondWith(() => 400);
    expect(await local(delivery('127.0.0.1'), 2000)).toEqual({ ok: false, retryable: false, status: 400, reason: 'the receiver answered 400' });
    receiver.respondWith(() => 200);
  });

  it('gives up on a receiver that never answers within the attempt’s time', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const outcome = await httpSinkPoster({ addresses: { allowLoopback: true } })({ url: `http://127.0.0.1:${silentPort}/`, headers: {}, body: '[]' }, 300);
    expect(outcome).toEqual({ ok: false, retryable: true, reason: 'no answer within 300 ms' });
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
