/**
 * The refusal family: every error code the spec defines, and the relay's own, answered the same
 * way by each binding from one place: HTTP (`httpErrors`), an SSE stream refused before it starts
 * (`refuseStream`), and the WebSocket binding's `error` frame, closing only what ends the
 * connection (`socket-refusals.ts`).
 */
import { PassThrough } from 'node:stream';
import type { MiddlewareObj } from '@middy/core';
import { describe, expect, it } from 'vitest';
import { RELAY_REFUSALS, refusal, SPEC_REFUSALS } from '../../src/errors/relay-error.ts';
import type { RefusalCode } from '../../src/errors/relay-error.ts';
import { httpErrors } from '../../src/middleware/http-errors.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { refuseStream } from '../../src/relay/sse/serve-stream.ts';
import type { ResponsePrelude } from '../../src/relay/sse/serve-stream.ts';
import { answeringOf, refuse, refuseConnection } from '../../src/relay/socket/socket-refusals.ts';
import type { SocketContext } from '../../src/relay/socket/socket-context.ts';
import { parseClientMessage } from '../../src/protocol/client-message.ts';

/** Every code the spec gives a refusal, where it gives it. */
const SPEC_CODES: Record<string, string> = {
  unauthenticated: 'AEP-0003 §8.1',
  unauthorized: 'AEP-0003 §4, §6.5, §8; AEP-0004 §4.2',
  'version-unsupported': 'AEP-0003 §3.2, §4',
  'hello-required': 'AEP-0003 §3.5.1',
  'invalid-event': 'AEP-0003 §3.2',
  'invalid-filter': 'AEP-0003 §6.5',
  'unknown-dialect': 'AEP-0003 §6.5',
  'limit-exceeded': 'AEP-0003 §6.5',
  unsupported: 'AEP-0004 §4.2',
  ambiguous: 'AEP-0004 §4.2',
  'no-route': 'AEP-0004 §4.2',
};

/** What each binding answers: the HTTP status, and whether a socket refusal of the code ends the connection. */
const EXPECTED: Record<RefusalCode, { status: number; endsConnection: boolean }> = {
  unauthenticated: { status: 401, endsConnection: true },
  unauthorized: { status: 403, endsConnection: false },
  'version-unsupported': { status: 426, endsConnection: true },
  'hello-required': { status: 400, endsConnection: true },
  'invalid-event': { status: 400, endsConnection: false },
  'invalid-filter': { status: 400, endsConnection: false },
  'unknown-dialect': { status: 400, endsConnection: false },
  'limit-exceeded': { status: 429, endsConnection: false },
  unsupported: { status: 409, endsConnection: false },
  ambiguous: { status: 409, endsConnection: false },
  'no-route': { status: 404, endsConnection: false },
  'invalid-hello': { status: 400, endsConnection: true },
  'invalid-frame': { status: 400, endsConnection: false },
  'payload-too-large': { status: 413, endsConnection: false },
  'too-many-events': { status: 413, endsConnection: false },
  'event-too-large': { status: 413, endsConnection: false },
  'unsupported-media-type': { status: 415, endsConnection: false },
  unavailable: { status: 503, endsConnection: false },
  'not-found': { status: 404, endsConnection: false },
  'method-not-allowed': { status: 405, endsConnection: false },
  'invalid-query': { status: 400, endsConnection: false },
  'invalid-cursor': { status: 400, endsConnection: false },
  'invalid-request': { status: 400, endsConnection: false },
  'tenant-exists': { status: 409, endsConnection: false },
  'token-inactive': { status: 409, endsConnection: false },
  'operator-lockout': { status: 409, endsConnection: false },
};

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;

async function overHttp(error: unknown): Promise<{ statusCode?: number; body: Record<string, unknown>; headers?: Record<string, unknown> }> {
  const middleware = httpErrors(quiet) as MiddlewareObj & { onError: (request: unknown) => Promise<void> };
  const request = { error, context: { awsRequestId: 'r' }, response: undefined as unknown as { statusCode?: number; body: string; headers?: Record<string, unknown> } };
  await middleware.onError(request);
  return { ...request.response, body: JSON.parse(request.response.body) as Record<string, unknown> };
}

function overSse(error: unknown): { prelude: ResponsePrelude; body: Record<string, unknown> } {
  let prelude!: ResponsePrelude;
  const stream = new PassThrough();
  refuseStream({ request: {} as never, remainingMs: () => 1000, open: (given) => ((prelude = given), stream) }, quiet, error);
  return { prelude, body: JSON.parse(String(stream.read())) as Record<string, unknown> };
}

/** A socket whose posts and closes are recorded, its connection in `state`. */
function socket(state: 'connected' | 'open' = 'open', outcome: 'sent' | 'throttled' = 'sent') {
  const posted: Array<Record<string, unknown>> = [];
  let closed = false;
  let current: string = state;
  const context = {
    connectionId: 'c1',
    requestId: 'r1',
    principal: { tenant: 't1' },
    logger: quiet,
    runtime: {
      poster: {
        post: async (_id: string, text: string) => (posted.push(JSON.parse(text) as Record<string, unknown>), outcome),
        close: async () => void (closed = true),
      },
      connections: {
        removeConnection: async () => undefined,
        transition: async (_tenant: string, _id: string, from: readonly string[], to: string) => (from.includes(current) ? ((current = to), true) : false),
      },
    },
  } as unknown as SocketContext;
  return { context, posted, closed: () => closed, state: () => current };
}

describe('the refusal family', () => {
  it('names every refusal code of the spec, with the section giving it', () => {
    expect(Object.keys(SPEC_REFUSALS).sort()).toEqual(Object.keys(SPEC_CODES).sort());
    expect(Object.keys({ ...SPEC_REFUSALS, ...RELAY_REFUSALS }).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED) as RefusalCode[])('answers %s over HTTP, SSE and WebSocket from one mapping', async (code) => {
    const { status, endsConnection } = EXPECTED[code];
    const http = await overHttp(refusal(code, 'why'));
    expect(http.statusCode).toBe(status);
    expect(http.body).toMatchObject({ error: code, detail: 'why' });

    const sse = overSse(refusal(code, 'why'));
    expect(sse.prelude.statusCode).toBe(status);
    expect(sse.body).toEqual(http.body);

    const asked = socket();
    await refuse(asked.context, refusal(code, 'why'), { id: 'sub-1' });
    expect(asked.posted[0]).toEqual({ type: 'error', code, id: 'sub-1', detail: 'why' });
    // A connection that ends is told why, with `closing`, before the close (AEP-0003 §3.5.4).
    expect(asked.closed()).toBe(endsConnection);
    expect(asked.posted.slice(1)).toEqual(endsConnection ? [expect.objectContaining({ type: 'closing', reason: code })] : []);
  });

  it('ends the connection when the gateway could not take a refusal, so the client is never left waiting in silence', async () => {
    const asked = socket('open', 'throttled');
    await refuse(asked.context, refusal('unavailable', 'busy'), { cause: 'e1' });
    expect(asked.posted).toEqual([{ type: 'error', code: 'unavailable', cause: 'e1', detail: 'busy' }]);
    expect(asked.closed()).toBe(true);
  });

  it('correlates a socket refusal with what it answers: a request id, an event or command id as cause, or the connection', () => {
    expect(answeringOf(parseClientMessage('{"type":"subscribe","id":"s1","filter":{}}'))).toEqual({ id: 's1' });
    expect(answeringOf(parseClientMessage('{"type":"roster","id":"r1"}'))).toEqual({ id: 'r1' });
    expect(answeringOf(parseClientMessage('{"type":"tool.requested","id":"e1"}'))).toEqual({ cause: 'e1' });
    expect(answeringOf(parseClientMessage('{"type":"hello","versions":["0.1"],"role":"consumer","identity":{},"capabilities":{}}'))).toBe('connection');
    expect(answeringOf(parseClientMessage('{"type":"pong"}'))).toBeUndefined();
    expect(answeringOf(parseClientMessage('{"type":"something-new"}'))).toBeUndefined();
  });

  it('refuses a connection once: the refusal that wins the state change is sent and closes, a second one changes nothing', async () => {
    const asked = socket('connected');
    expect(await refuseConnection(asked.context, refusal('unauthorized', 'card'), ['connected'])).toBe(true);
    expect(await refuseConnection(asked.context, refusal('hello-required', 'late'), ['connected'])).toBe(false);
    expect(asked.state()).toBe('rejected');
    expect(asked.posted.map((frame) => frame.type)).toEqual(['error', 'closing']);
    expect(asked.posted[0]).toMatchObject({ code: 'unauthorized', detail: 'card' });
    expect(asked.closed()).toBe(true);
  });

  it('gives the versions it speaks with version-unsupported, on every binding', async () => {
    const { versionUnsupported } = await import('../../src/errors/relay-error.ts');
    expect((await overHttp(versionUnsupported(['0.1']))).body).toMatchObject({ versions: ['0.1'] });
    const asked = socket('connected');
    await refuseConnection(asked.context, versionUnsupported(['0.1'], 'no offered version is supported'), ['connected']);
    expect(asked.posted[0]).toEqual({ type: 'error', code: 'version-unsupported', versions: ['0.1'], detail: 'no offered version is supported' });
  });
});
