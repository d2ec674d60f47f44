/**
 * An emulation of the `awslambda` global the Lambda Node.js runtime provides for response
 * streaming, so `functions/stream` runs unchanged on the local stack.
 *
 * As in the runtime: `streamifyResponse` only tags the handler; `HttpResponseStream.from`
 * returns the same stream, and its first write is preceded by the JSON prelude (status,
 * headers) and eight NUL bytes, which the function URL front end (here the local gateway,
 * `gateway/response-streaming.ts`) strips and turns into the HTTP status and headers.
 */
import type { Writable } from 'node:stream';

export const STREAMING_HANDLER = Symbol.for('aws.lambda.runtime.handler.streaming');
export const PRELUDE_DELIMITER = Buffer.alloc(8, 0);
/** Marks a stream whose body starts with a prelude. */
export const HAS_PRELUDE = Symbol.for('aep.local.http-response-stream');

export function installLambdaStreamingGlobal(): void {
  const from = (writable: Writable, prelude: Record<string, unknown>): Writable => {
    const originalWrite = writable.write.bind(writable) as (...args: unknown[]) => boolean;
    const originalEnd = writable.end.bind(writable) as (...args: unknown[]) => Writable;
    let preludeWritten = false;
    const writePrelude = () => {
      if (preludeWritten) return;
      preludeWritten = true;
      originalWrite(Buffer.concat([Buffer.from(JSON.stringify(prelude)), PRELUDE_DELIMITER]));
    };
    (writable as unknown as Record<symbol, boolean>)[HAS_PRELUDE] = true;
    writable.write = ((...args: unknown[]) => {
      writePrelude();
      return originalWrite(...args);
    }) as Writable['write'];
    writable.end = ((...args: unknown[]) => {
      writePrelude();
      return originalEnd(...args);
    }) as Writable['end'];
    return writable;
  };
  (globalThis as Record<string, unknown>).awslambda = {
    streamifyResponse: <T extends object>(handler: T): T => {
      (handler as Record<symbol, unknown>)[STREAMING_HANDLER] = 'response';
      return handler;
    },
    HttpResponseStream: { from },
  };
}
