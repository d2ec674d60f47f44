/**
 * `functions/fanout`: invoked by the event log's DynamoDB Stream (through an event source
 * mapping with per-record failure reporting); folds the batch into the session summaries
 * (`GET /sessions`), then delivers new events to WebSocket subscribers.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { fanOut } from '../../src/relay/fanout/fanout.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { deliverablesOf, sessionActivitiesOf } from '../../src/store/event-stream.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-fanout' });

/** The fan-out handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event, context) => {
      // Summaries are secondary: a failure to fold a batch in is logged and never holds up
      // delivery (a retried batch is not counted twice, `session-summaries.ts`).
      await runtime.sessionSummaries.recordActivity(sessionActivitiesOf(event.Records)).catch((error: unknown) => {
        logger.error('session summaries not updated for this batch', { error: error instanceof Error ? error.message : String(error) });
      });
      const report = await fanOut(runtime, logger.child({ requestId: context.awsRequestId }), deliverablesOf(event.Records));
      logger.debug('fan-out batch', { records: event.Records.length, posted: report.posted, dropped: report.dropped, disconnected: report.disconnected, closed: report.closed, failed: report.failedRecordIds.length });
      return { batchItemFailures: report.failedRecordIds.map((itemIdentifier) => ({ itemIdentifier })) };
    });
}

export const handler = createHandler(createRuntime({ config: readRelayConfig(process.env), metrics: createRelayMetrics({ service: 'aep-relay-fanout' }) }));
