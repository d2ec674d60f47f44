/**
 * Lambda response streaming: the Node.js runtime provides a global `awslambda` (typed by
 * `@types/aws-lambda`) with `streamifyResponse` and `HttpResponseStream.from`, which writes
 * the HTTP status and headers before the body of a function URL response. The local stack
 * installs an emulation of the same global (`local/lambda-streaming-global.ts`).
 */
export interface HttpResponsePrelude {
  statusCode: number;
  headers?: Record<string, string>;
  cookies?: string[];
}
