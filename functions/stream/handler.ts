/**
 * `functions/stream`: `GET /stream` (SSE, AEP-0003 §3.3) on a Lambda function URL in
 * RESPONSE_STREAM mode. Not wrapped in middy: middy's streaming mode models a handler that
 * returns a body, while SSE writes as events arrive for as long as the stream lives.
 */
/// <reference types="aws-lambda" />
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRuntime } from '../../src/relay/runtime.ts';
import { serveStream } from '../../src/relay/sse/serve-stream.ts';

const runtime = createRuntime(readRelayConfig(process.env));
const logger = createLogger({ service: 'aep-relay-stream' });

export const handler = awslambda.streamifyResponse(async (event, responseStream, context) => {
  await serveStream(runtime, logger.child({ requestId: context.awsRequestId }), {
    event,
    open: (prelude) => awslambda.HttpResponseStream.from(responseStream, { ...prelude }),
    remainingMs: () => context.getRemainingTimeInMillis(),
  });
});
