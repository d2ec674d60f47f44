/**
 * `functions/stream`: `GET /stream` (SSE, AEP-0003 §3.3) on a Lambda function URL in
 * RESPONSE_STREAM mode. Not wrapped in middy: middy's streaming mode models a handler that
 * returns a body, while SSE writes as events arrive for as long as the stream lives.
 */
/// <reference types="aws-lambda" />
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { streamRequestOf } from '../../src/gateway/lambda-streaming.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { serveStream } from '../../src/relay/sse/serve-stream.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-stream' });

/** How often a running stream publishes its metrics (CloudWatch's finest standard resolution). */
const METRICS_FLUSH_INTERVAL_MS = 60_000;

/** The stream handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return awslambda.streamifyResponse(async (event, responseStream, context) => {
    logger.powertools.addContext(context);
    // A stream lives for minutes: its counts are published as it goes, and at its end.
    const periodicFlush = setInterval(() => runtime.metrics.flush(), METRICS_FLUSH_INTERVAL_MS);
    try {
      await serveStream(runtime, logger.child({ requestId: context.awsRequestId }), {
        request: streamRequestOf(event),
        open: (prelude) => awslambda.HttpResponseStream.from(responseStream, { ...prelude }),
        remainingMs: () => context.getRemainingTimeInMillis(),
      });
    } finally {
      clearInterval(periodicFlush);
      runtime.metrics.flush();
    }
  });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-stream', namespace: config.metricsNamespace }) }));
