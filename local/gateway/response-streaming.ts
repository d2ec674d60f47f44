/**
 * The function URL side of the local gateway for a RESPONSE_STREAM function: invokes the
 * handler with a response stream, turns the prelude written by `HttpResponseStream.from`
 * into the HTTP status and headers, and passes every later write straight to the client
 * (nothing buffered here, so heartbeats and events reach the client as written). When the
 * client goes away, the response stream is destroyed: the function's next write finds it
 * closed, and the relay's stream ends (`sse-writer.ts`). Whether the Lambda runtime reports a
 * departed client the same way is not documented (docs/operations.md "Overload": unverified on AWS); where it does not,
 * the relay's idle end still ends the stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { lambdaContext } from '../lambda-context.ts';
import { HAS_PRELUDE, PRELUDE_DELIMITER } from '../lambda-streaming-global.ts';
import { isPreflight, preflightHeaders, withCorsHeaders } from './cors.ts';
import type { CorsConfiguration } from './cors.ts';
import { httpApiEvent, readBody } from './http-api.ts';
import type { StreamInvocations } from './stream-invocations.ts';
import { sseComment } from '../../src/relay/sse/sse-format.ts';

export type StreamingHandler = (event: APIGatewayProxyEventV2, responseStream: Writable, context: Context) => Promise<void>;

/** What an event stream's client reads last when the local stack stops. */
const STOPPING_COMMENT = sseComment('closing: the relay is stopping; reconnect with Last-Event-ID to resume');

function isEventStream(headers: Record<string, string>): boolean {
  return Object.entries(headers).some(([name, value]) => name.toLowerCase() === 'content-type' && value.toLowerCase().startsWith('text/event-stream'));
}

/** Lambda's maximum duration, which bounds a streamed response. */
const FUNCTION_TIMEOUT_MS = 15 * 60_000;

export interface FunctionUrlOptions {
  /** The function's timeout (default Lambda's maximum, 15 minutes). */
  timeoutMs?: number;
  /** The function URL's CORS configuration, when the deployment allows origins (the URL answers preflights itself). */
  cors?: CorsConfiguration;
  /** Where running invocations are tracked, so a stop can end them first (`stream-invocations.ts`). */
  invocations?: StreamInvocations;
}

export async function serveStreamingFunction(handler: StreamingHandler, request: IncomingMessage, response: ServerResponse, url: URL, options: FunctionUrlOptions = {}): Promise<void> {
  const { cors } = options;
  if (cors !== undefined && isPreflight(cors, request.method, request.headers)) {
    response.writeHead(204, preflightHeaders(cors, request.headers)).end();
    return;
  }
  const body = await readBody(request, 6 * 1024 * 1024);
  if (body === 'too-large') {
    response.writeHead(413).end();
    return;
  }
  const responseStream = new PassThrough();
  let head = Buffer.alloc(0);
  let headersSent = false;
  let eventStream = false;
  const sendHead = (statusCode: number, headers: Record<string, string>) => {
    eventStream = isEventStream(headers);
    response.writeHead(statusCode, cors === undefined ? headers : withCorsHeaders(cors, request.headers, headers));
    response.flushHeaders();
    headersSent = true;
  };
  // The client went away before the response ended: the function's stream closes with it.
  response.once('close', () => {
    if (!response.writableEnded) responseStream.destroy();
  });
  responseStream.on('data', (chunk: Buffer) => {
    if (response.destroyed || response.writableEnded) return;
    if (headersSent) {
      response.write(chunk);
      return;
    }
    if (!(responseStream as unknown as Record<symbol, boolean>)[HAS_PRELUDE]) {
      sendHead(200, { 'content-type': 'application/octet-stream' });
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(PRELUDE_DELIMITER);
    if (end === -1) return;
    const prelude = JSON.parse(head.subarray(0, end).toString('utf8')) as { statusCode?: number; headers?: Record<string, string> };
    sendHead(prelude.statusCode ?? 200, prelude.headers ?? {});
    const rest = head.subarray(end + PRELUDE_DELIMITER.length);
    if (rest.length > 0) response.write(rest);
  });
  responseStream.on('end', () => {
    if (!headersSent) sendHead(200, {});
    response.end();
  });
  // Destroyed by a stop of the stack (`stream-invocations.ts`): the client's response ends too.
  responseStream.on('close', () => {
    if (headersSent && !response.writableEnded) response.end();
  });
  try {
    const invocation = handler(httpApiEvent(request, url, body), responseStream, lambdaContext('aep-relay-stream', options.timeoutMs ?? FUNCTION_TIMEOUT_MS));
    options.invocations?.track(() => {
      // The stack is stopping: an event stream's client is told so with the closing comment the
      // relay ends a stream with deliberately (src/relay/sse/serve-stream.ts), between two whole
      // messages (each of the handler's writes is one), so EventSource reconnects and resumes.
      if (eventStream && !response.writableEnded) response.end(STOPPING_COMMENT);
      responseStream.destroy();
    }, invocation);
    await invocation;
  } catch {
    if (!headersSent) response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Internal Server Error' }));
    else response.end();
    return;
  }
  if (!responseStream.writableEnded && !responseStream.destroyed) responseStream.end();
}
