/**
 * The local WebSocket API against inline fake handlers: handshake refusals, the route event
 * contract, concurrent `$default` invocations, binary frames, the frame and message quotas,
 * idle and duration limits, and `$disconnect`.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { WebSocketRouteEvent } from '../../src/gateway/websocket-event.ts';
import { closed, connect, open, startFakeGateway } from './fake-gateway.ts';
import type { FakeGateway, FakeGatewayOptions } from './fake-gateway.ts';

let running: FakeGateway | undefined;

async function gateway(options: FakeGatewayOptions = {}): Promise<FakeGateway> {
  running = await startFakeGateway(options);
  return running;
}

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

const allow = (event: APIGatewayRequestAuthorizerEvent, context: Record<string, string> = {}): APIGatewayAuthorizerResult => ({
  principalId: 'token-1',
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }] },
  context,
});

const routeKeys = (events: WebSocketRouteEvent[]) => events.map((event) => event.requestContext.routeKey);

describe('local WebSocket API: handshake', () => {
  it('refuses with 401 when the authorizer throws Unauthorized, without invoking $connect', async () => {
    const api = await gateway({
      authorizer: async () => {
        throw new Error('Unauthorized');
      },
    });
    expect(await connect(api.socketUrl)).toEqual({ refused: 401 });
    expect(api.events).toEqual([]);
  });

  it('refuses with 403 on a Deny policy and 500 when the authorizer fails otherwise', async () => {
    let mode: 'deny' | 'crash' = 'deny';
    const api = await gateway({
      authorizer: async (event) => {
        if (mode === 'crash') throw new Error('database down');
        return { principalId: 'x', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: event.methodArn }] } };
      },
    });
    expect(await connect(api.socketUrl)).toEqual({ refused: 403 });
    mode = 'crash';
    expect(await connect(api.socketUrl)).toEqual({ refused: 500 });
    expect(api.events).toEqual([]);
  });

  it('hands the authorizer a WebSocket REQUEST event and every route the flattened context', async () => {
    const authorizerEvents: APIGatewayRequestAuthorizerEvent[] = [];
    const api = await gateway({
      authorizer: async (event) => {
        authorizerEvents.push(event);
        return allow(event, { tenant: 'acme', scopes: 'events:read,events:write' });
      },
    });
    const socket = await open(`${api.socketUrl}?access_token=abc&x=1&x=2`, { 'X-Custom': 'yes' });
    socket.send('hi');
    await api.waitForEvent((event) => event.requestContext.routeKey === '$default');
    const disconnecting = api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    socket.close(1000, 'done');
    await disconnecting;

    const authorizerEvent = authorizerEvents[0] as unknown as Record<string, any>;
    expect(authorizerEvent.type).toBe('REQUEST');
    expect(authorizerEvent.methodArn).toBe('arn:aws:execute-api:us-east-1:000000000000:local/local/$connect');
    expect(authorizerEvent.headers['X-Custom']).toBe('yes');
    expect(authorizerEvent.queryStringParameters).toEqual({ access_token: 'abc', x: '2' });
    expect(authorizerEvent.multiValueQueryStringParameters).toEqual({ access_token: ['abc'], x: ['1', '2'] });
    expect(authorizerEvent.requestContext).toMatchObject({ routeKey: '$connect', eventType: 'CONNECT', stage: 'local', apiId: 'local' });

    const [connectEvent, messageEvent, disconnectEvent] = api.events as [WebSocketRouteEvent, WebSocketRouteEvent, WebSocketRouteEvent];
    expect(routeKeys(api.events)).toEqual(['$connect', '$default', '$disconnect']);
    const connectionId = connectEvent.requestContext.connectionId;
    expect(connectionId).toMatch(/^[A-Za-z0-9+/]{15}=$/);
    expect(authorizerEvent.requestContext.connectionId).toBe(connectionId);
    expect(connectEvent.requestContext).toMatchObject({
      eventType: 'CONNECT',
      messageDirection: 'IN',
      stage: 'local',
      apiId: 'local',
      identity: { sourceIp: '127.0.0.1' },
      authorizer: { principalId: 'token-1', tenant: 'acme', scopes: 'events:read,events:write' },
    });
    expect(connectEvent.requestContext.requestTime).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(connectEvent.headers?.['X-Custom']).toBe('yes');
    expect(connectEvent.multiValueHeaders?.['X-Custom']).toEqual(['yes']);
    expect(connectEvent.queryStringParameters).toEqual({ access_token: 'abc', x: '2' });
    expect(connectEvent.isBase64Encoded).toBe(false);

    expect(messageEvent.requestContext).toMatchObject({ routeKey: '$default', eventType: 'MESSAGE', connectionId, connectedAt: connectEvent.requestContext.connectedAt });
    expect(messageEvent.requestContext.authorizer).toEqual(connectEvent.requestContext.authorizer);
    expect(messageEvent.requestContext.messageId).not.toBe(connectEvent.requestContext.messageId);
    expect(messageEvent.body).toBe('hi');
    expect(messageEvent.headers).toBeUndefined();

    expect(disconnectEvent.requestContext).toMatchObject({ eventType: 'DISCONNECT', connectionId, disconnectStatusCode: 1000, disconnectReason: 'done' });
    expect(disconnectEvent.requestContext.authorizer).toEqual(connectEvent.requestContext.authorizer);
  });

  it('refuses the handshake with the status of a non-2xx $connect, and 500 when $connect throws', async () => {
    let mode: 'refuse' | 'throw' = 'refuse';
    const api = await gateway({
      route: async (event) => {
        if (event.requestContext.routeKey !== '$connect') return { statusCode: 200 };
        if (mode === 'throw') throw new Error('boom');
        return { statusCode: 429, body: 'slow down' };
      },
    });
    expect(await connect(api.socketUrl)).toEqual({ refused: 429 });
    mode = 'throw';
    expect(await connect(api.socketUrl)).toEqual({ refused: 500 });
    expect(routeKeys(api.events)).toEqual(['$connect', '$connect']);
    expect(api.api.connections.size).toBe(0);
  });

  it('answers a subprotocol only when $connect returns the Sec-WebSocket-Protocol header', async () => {
    const api = await gateway({
      route: async (event) => {
        const offered = event.headers?.['Sec-WebSocket-Protocol'];
        return offered?.includes('aep.v1') ? ({ statusCode: 200, headers: { 'Sec-WebSocket-Protocol': 'aep.v1' } } as { statusCode: number }) : { statusCode: 200 };
      },
    });
    const accepted = new WebSocket(api.socketUrl, ['aep.v1', 'other']);
    await once(accepted, 'open');
    expect(accepted.protocol).toBe('aep.v1');
    accepted.close();
    // Offered but not chosen: the handshake answer carries no protocol, which a client rejects.
    const unanswered = new WebSocket(api.socketUrl, ['other']);
    const [error] = (await once(unanswered, 'error')) as [Error];
    expect(error.message).toMatch(/no subprotocol/i);
  });

  it('opens the socket only after $connect returns, so the connection is not open while it runs', async () => {
    let openDuringConnect: boolean | undefined;
    const api = await gateway({
      route: async (event) => {
        if (event.requestContext.routeKey === '$connect') openDuringConnect = running?.api.connections.get(event.requestContext.connectionId) !== undefined;
        return { statusCode: 200 };
      },
    });
    const socket = await open(api.socketUrl);
    expect(openDuringConnect).toBe(false);
    expect(api.api.connections.size).toBe(1);
    socket.close();
  });
});

describe('local WebSocket API: messages', () => {
  it('invokes $default concurrently: a slow first message does not hold back the second', async () => {
    let releaseSlow: () => void = () => undefined;
    const slowReleased = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const finished: string[] = [];
    const api = await gateway({
      invokeJitterMs: 0,
      route: async (event) => {
        if (event.body === 'slow') {
          // Serialized invocations would deadlock here: only the second message releases the first.
          await slowReleased;
        }
        if (event.body === 'fast') releaseSlow();
        if (event.body !== undefined) finished.push(event.body);
        return { statusCode: 200 };
      },
    });
    const socket = await open(api.socketUrl);
    socket.send('slow');
    socket.send('fast');
    await api.waitForEvent((event) => event.body === 'fast');
    await expect.poll(() => finished).toEqual(['fast', 'slow']);
    socket.close();
  });

  it('delivers text frames as text and binary frames as base64', async () => {
    const api = await gateway();
    const socket = await open(api.socketUrl);
    socket.send('{"type":"hello"}');
    socket.send(Buffer.from([0, 1, 2, 250, 255]), { binary: true });
    const text = await api.waitForEvent((event) => event.requestContext.eventType === 'MESSAGE' && !event.isBase64Encoded);
    const binary = await api.waitForEvent((event) => event.requestContext.eventType === 'MESSAGE' && event.isBase64Encoded);
    expect(text.body).toBe('{"type":"hello"}');
    expect(binary.body).toBe(Buffer.from([0, 1, 2, 250, 255]).toString('base64'));
    socket.close();
  });

  it('closes with 1009 on a single 40 KiB frame, without routing it', async () => {
    const api = await gateway();
    const socket = await open(api.socketUrl);
    const closing = closed(socket);
    socket.send('x'.repeat(40 * 1024));
    expect((await closing).code).toBe(1009);
    const disconnect = await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    expect(disconnect.requestContext.disconnectStatusCode).toBe(1009);
    expect(api.events.filter((event) => event.requestContext.routeKey === '$default')).toEqual([]);
  });

  it('accepts a 120 KiB message sent in 32 KiB frames', async () => {
    const api = await gateway();
    const socket = await open(api.socketUrl);
    sendFragmented(socket, 'y'.repeat(120 * 1024), 32 * 1024);
    const message = await api.waitForEvent((event) => event.requestContext.routeKey === '$default');
    expect(message.body?.length).toBe(120 * 1024);
    socket.close();
  });

  it('closes with 1009 on a 130 KiB message even when every frame is within 32 KiB', async () => {
    const api = await gateway();
    const socket = await open(api.socketUrl);
    const closing = closed(socket);
    sendFragmented(socket, 'z'.repeat(130 * 1024), 32 * 1024);
    expect((await closing).code).toBe(1009);
    await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    expect(api.events.filter((event) => event.requestContext.routeKey === '$default')).toEqual([]);
  });
});

describe('local WebSocket API: lifetime', () => {
  it('invokes $disconnect once with the client close code and reason, and forgets the connection', async () => {
    const api = await gateway();
    const socket = await open(api.socketUrl);
    socket.close(4001, 'client leaving');
    const disconnect = await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    expect(disconnect.requestContext).toMatchObject({ disconnectStatusCode: 4001, disconnectReason: 'client leaving' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(routeKeys(api.events).filter((key) => key === '$disconnect')).toHaveLength(1);
    expect(api.api.connections.size).toBe(0);
  });

  it('keeps going when $disconnect fails (best effort)', async () => {
    const api = await gateway({
      route: async (event) => {
        if (event.requestContext.routeKey === '$disconnect') throw new Error('table gone');
        return { statusCode: 200 };
      },
    });
    const socket = await open(api.socketUrl);
    socket.close();
    await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect');
    const again = await open(api.socketUrl);
    again.close();
  });

  it('closes an idle connection with 1001 Going away', async () => {
    const api = await gateway({ idleTimeoutMs: 300 });
    const socket = await open(api.socketUrl);
    const closing = closed(socket);
    expect(await closing).toEqual({ code: 1001, reason: 'Going away' });
    await api.waitForEvent((event) => event.requestContext.routeKey === '$disconnect' && event.requestContext.disconnectStatusCode === 1001);
  });

  it('client messages keep a connection from idling out, but not past the maximum duration', async () => {
    const api = await gateway({ idleTimeoutMs: 300, maxConnectionMs: 1_000 });
    const socket = await open(api.socketUrl);
    const opened = Date.now();
    const closing = closed(socket);
    const keepAlive = setInterval(() => socket.readyState === socket.OPEN && socket.send('ping'), 100);
    const result = await closing;
    clearInterval(keepAlive);
    expect(result.code).toBe(1001);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(950);
  });

  it('close() closes every socket with 1001 and waits for their $disconnect', async () => {
    const api = await gateway();
    const sockets = await Promise.all([open(api.socketUrl), open(api.socketUrl)]);
    const closings = sockets.map((socket) => closed(socket));
    await api.api.close();
    expect(routeKeys(api.events).filter((key) => key === '$disconnect')).toHaveLength(2);
    expect((await Promise.all(closings)).map((result) => result.code)).toEqual([1001, 1001]);
    expect(await connect(api.socketUrl)).toEqual({ refused: 503 });
  });
});

/** Sends `text` as one message split into frames of at most `frameBytes`. */
function sendFragmented(socket: WebSocket, text: string, frameBytes: number): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; offset += frameBytes) {
    const end = Math.min(offset + frameBytes, bytes.length);
    socket.send(bytes.subarray(offset, end), { binary: false, fin: end === bytes.length });
  }
}
