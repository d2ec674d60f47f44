/**
 * The local `@connections` endpoint, driven by the real `ApiGatewayManagementApiClient` the
 * handlers use: the SDK must map every answer to the exception the cloud would raise.
 */
import { connect as tcpConnect } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GetConnectionCommand,
  GoneException,
  LimitExceededException,
  PayloadTooLargeException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type WebSocket from 'ws';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { closed, open, startFakeGateway } from './fake-gateway.ts';
import type { FakeGateway, FakeGatewayOptions } from './fake-gateway.ts';

let running: FakeGateway | undefined;
let management: ApiGatewayManagementApiClient | undefined;

async function gateway(options: FakeGatewayOptions = {}): Promise<{ api: FakeGateway; client: ApiGatewayManagementApiClient }> {
  running = await startFakeGateway(options);
  management = new ApiGatewayManagementApiClient({ endpoint: running.management.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  return { api: running, client: management };
}

afterEach(async () => {
  management?.destroy();
  await running?.stop();
  running = undefined;
});

/** Resolves with the next message the client receives, and whether it came as binary. */
function nextMessage(socket: WebSocket): Promise<{ text: string; isBinary: boolean }> {
  return new Promise((resolve) => socket.once('message', (data: Buffer, isBinary: boolean) => resolve({ text: data.toString('utf8'), isBinary })));
}

const post = (client: ApiGatewayManagementApiClient, connectionId: string, data: string | Uint8Array) =>
  client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: typeof data === 'string' ? Buffer.from(data) : data }));

describe('local @connections endpoint with the real management client', () => {
  it('answers GoneException (410) for an unknown connection, on every operation', async () => {
    const { client } = await gateway();
    for (const command of [
      new PostToConnectionCommand({ ConnectionId: 'nope', Data: Buffer.from('x') }),
      new GetConnectionCommand({ ConnectionId: 'nope' }),
      new DeleteConnectionCommand({ ConnectionId: 'nope' }),
    ]) {
      const error = await client.send(command as PostToConnectionCommand).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GoneException);
      expect((error as GoneException).$metadata.httpStatusCode).toBe(410);
    }
  });

  it('posts the data as a text message to a connection whose id needs URL encoding', async () => {
    const { api, client } = await gateway({ mintConnectionId: () => 'ab/cd+ef/gh+ijk=' });
    const socket = await open(api.socketUrl);
    const received = nextMessage(socket);
    await post(client, 'ab/cd+ef/gh+ijk=', '{"type":"event"}');
    expect(await received).toEqual({ text: '{"type":"event"}', isBinary: false });
    socket.close();
  });

  it('sends a message over the frame quota as one message in several frames', async () => {
    const { api, client } = await gateway();
    const socket = await open(api.socketUrl);
    const connectionId = api.events[0]?.requestContext.connectionId as string;
    const big = 'é'.repeat(50 * 1024); // 100 KiB of two-byte characters: frames split inside characters
    const received = nextMessage(socket);
    await post(client, connectionId, big);
    expect((await received).text).toBe(big);
    socket.close();
  });

  it('answers PayloadTooLargeException (413) over 128 KiB', async () => {
    const { api, client } = await gateway();
    const socket = await open(api.socketUrl);
    const connectionId = api.events[0]?.requestContext.connectionId as string;
    await post(client, connectionId, 'a'.repeat(128 * 1024));
    const error = await post(client, connectionId, 'a'.repeat(128 * 1024 + 1)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PayloadTooLargeException);
    socket.close();
  });

  it('answers GoneException to a post from the $connect handler: the connection is not open yet', async () => {
    let postFromConnect: unknown;
    const { api } = await gateway({
      route: async (event) => {
        if (event.requestContext.routeKey === '$connect') {
          postFromConnect = await post(management as ApiGatewayManagementApiClient, event.requestContext.connectionId, 'too early').catch((caught: unknown) => caught);
        }
        return { statusCode: 200 };
      },
    });
    const socket = await open(api.socketUrl);
    expect(postFromConnect).toBeInstanceOf(GoneException);
    socket.close();
  });

  it('describes a connection with GetConnection', async () => {
    const { api, client } = await gateway();
    const before = Date.now();
    const socket = await open(api.socketUrl, { 'User-Agent': 'aep-test/1' });
    const connectionId = api.events[0]?.requestContext.connectionId as string;
    socket.send('activity');
    await api.waitForEvent((event) => event.requestContext.routeKey === '$default');
    const described = await client.send(new GetConnectionCommand({ ConnectionId: connectionId }));
    expect(described.Identity).toEqual({ SourceIp: '127.0.0.1', UserAgent: 'aep-test/1' });
    expect(described.ConnectedAt).toBeInstanceOf(Date);
    expect(described.ConnectedAt?.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(described.LastActiveAt?.getTime()).toBeGreaterThanOrEqual(described.ConnectedAt?.getTime() ?? 0);
    socket.close();
  });

  it('DeleteConnection closes the socket with 1000 and runs $disconnect; the connection is then gone', async () => {
    const { api, client } = await gateway();
    const socket = await open(api.socketUrl);
    const connectionId = api.events[0]?.requestContext.connectionId as string;
    const closing = closed(socket);
    await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    expect((await closing).code).toBe(1000);
    const disconnect = await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    expect(disconnect.requestContext.connectionId).toBe(connectionId);
    expect(await post(client, connectionId, 'late').catch((caught: unknown) => caught)).toBeInstanceOf(GoneException);
  });

  it('answers LimitExceededException (429) while a consumer that stopped reading has a backlog, and recovers once it reads', async () => {
    const { api, client } = await gateway({ connections: { maxBufferedBytes: 64 * 1024 } });
    // A raw client that completes the handshake and then stops reading its socket.
    const port = Number(new URL(api.baseUrl).port);
    const raw = tcpConnect(port, '127.0.0.1');
    await once(raw, 'connect');
    raw.write(
      'GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    const [handshake] = (await once(raw, 'data')) as [Buffer];
    expect(handshake.toString('latin1')).toMatch(/^HTTP\/1\.1 101 /);
    raw.pause();
    const connectionId = api.events[0]?.requestContext.connectionId as string;

    const chunk = 'b'.repeat(100 * 1024);
    let throttled: unknown;
    for (let attempt = 0; attempt < 2_000 && throttled === undefined; attempt += 1) {
      throttled = await post(client, connectionId, chunk).then(
        () => undefined,
        (caught: unknown) => caught,
      );
    }
    expect(throttled).toBeInstanceOf(LimitExceededException);
    expect((throttled as LimitExceededException).$metadata.httpStatusCode).toBe(429);

    raw.resume();
    await expect.poll(() => api.api.connections.get(connectionId)?.socket.bufferedAmount, { timeout: 10_000 }).toBe(0);
    await post(client, connectionId, 'after the backlog drained');
    raw.destroy();
  });
});
