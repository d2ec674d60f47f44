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
import { createFanoutOrdering, fanOut } from '../../src/relay/fanout/fanout.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { deliverablesOf, sessionActivitiesOf } from '../../src/store/event-stream.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-fanout' });

/** The fan-out handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  // Per container: the ordering state fan-out keeps between batches.
  const ordering = createFanoutOrdering(runtime);
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event, context) => {
      // Summaries are secondary: a failure to fold a batch in is logged and never holds up
      // delivery (a retried batch is not counted twice, `session-summaries.ts`).
      // The update also answers each session's top before the batch (late arrivals measure
      // against it); without it fan-out falls back to reading the log's ceiling.
      const previousTops = await runtime.sessionSummaries.recordActivity(sessionActivitiesOf(event.Records)).catch((error: unknown) => {
        logger.error('session summaries not updated for this batch', { error: error instanceof Error ? error.message : String(error) });
        return new Map<string, string | null>();
      });
      const report = await fanOut(runtime, logger.child({ requestId: context.awsRequestId }), deliverablesOf(event.Records), ordering, previousTops);
      logger.debug('fan-out batch', { records: event.Records.length, posted: report.posted, dropped: report.dropped, disconnected: report.disconnected, closed: report.closed, failed: report.failedRecordIds.length });
      return { batchItemFailures: report.failedRecordIds.map((itemIdentifier) => ({ itemIdentifier })) };
    });
}

export const handler = createHandler(createRuntime({ config: readRelayConfig(process.env), metrics: createRelayMetrics({ service: 'aep-relay-fanout' }) }));
