import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwksFetcher } from '../../src/gateway/jwks-fetcher.ts';
import { parseOperatorSettings } from '../../src/relay/identity/operator-settings.ts';

/** Key set URLs follow the sinks' address rules: what the local stack may fetch, a deployed one refuses. */
const deployed = { allowLoopback: false };
const local = { allowLoopback: true };
let url = '';
let port = 0;
const server = createServer((_request, response) => response.writeHead(200, { 'cache-control': 'max-age=120' }).end('{"keys":[]}'));

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/jwks.json`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('JWKS URLs under the address rules', () => {
  it('fetches from loopback where loopback is allowed, with the answer’s max-age', async () => {
    expect(await jwksFetcher({ addresses: local })(url)).toEqual({ ok: true, body: '{"keys":[]}', maxAgeSeconds: 120 });
  });

  it('refuses loopback in a deployed configuration, by literal and by a name resolving to it', async () => {
    expect(await jwksFetcher({ addresses: deployed })(url)).toEqual({ ok: false, reason: 'the key set URL names a loopback address, which key set URLs may not reach' });
    const rebinding = jwksFetcher({ addresses: deployed, resolver: (_name, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]) });
    expect(await rebinding(`http://keys.example:${port}/jwks.json`)).toEqual({ ok: false, reason: "the key set URL's name resolves to a loopback address, which key set URLs may not reach" });
  });

  it('refuses, when registered, plain http and disallowed literals in a deployed configuration, and takes https', () => {
    expect(parseOperatorSettings('acme', { jwksUrl: url }, deployed, 0)).toMatchObject({ ok: false, reason: expect.stringContaining('loopback') });
    expect(parseOperatorSettings('acme', { jwksUrl: 'http://keys.example/jwks.json' }, deployed, 0)).toMatchObject({ ok: false, reason: '"jwksUrl" must use https' });
    expect(parseOperatorSettings('acme', { jwksUrl: 'https://10.1.2.3/jwks.json' }, deployed, 0)).toMatchObject({ ok: false, reason: expect.stringContaining('private') });
    expect(parseOperatorSettings('acme', { jwksUrl: 'https://keys.example/jwks.json' }, deployed, 0)).toMatchObject({ ok: true, operator: { name: 'acme', jwksUrl: 'https://keys.example/jwks.json' } });
    expect(parseOperatorSettings('acme', { jwksUrl: url }, local, 0)).toMatchObject({ ok: true });
    expect(parseOperatorSettings('a/b', { jwksUrl: url }, local, 0)).toMatchObject({ ok: false });
  });
});
