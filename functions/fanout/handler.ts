/**
 * `functions/fanout`: invoked by the event log's DynamoDB Stream (through an event source
 * mapping with per-record failure reporting): releases each emitter's session in order
 * (`fanout/order-lane.ts`), folds the session summaries (`GET /sessions`), then delivers to
 * WebSocket subscribers and SSE inboxes.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { createOrderLane, fanOut } from '../../src/relay/fanout/fanout.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { deliverablesOf, sessionActivitiesOf, wakeUpsOf } from '../../src/store/event-stream.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-fanout' });

/** The fan-out handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  // Per container: the order states it last committed (a cache; every commit is conditional).
  const lane = createOrderLane(runtime);
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event, context) => {
      const batch = { deliverables: deliverablesOf(event.Records), wakeUps: wakeUpsOf(event.Records), activities: sessionActivitiesOf(event.Records) };
      const report = await fanOut(runtime, logger.child({ requestId: context.awsRequestId }), batch, lane);
      logger.debug('fan-out batch', { records: event.Records.length, posted: report.posted, dropped: report.dropped, disconnected: report.disconnected, closed: report.closed, failed: report.failedRecordIds.length });
      return { batchItemFailures: report.failedRecordIds.map((itemIdentifier) => ({ itemIdentifier })) };
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-fanout', namespace: config.metricsNamespace }) }));
