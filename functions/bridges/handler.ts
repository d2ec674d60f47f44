/**
 * `functions/bridges`: the AEP-0005 bridges' own consumer of the event log's DynamoDB Stream
 * (a second event source mapping beside fan-out's, so a slow or failing sink never delays
 * live delivery): the live lane. Sends each tenant's new events to its sinks, all at once, one
 * attempt each within the live budget; what a sink does not accept in it goes to the sink-retry
 * worker (`functions/sinkretry`), what it refuses for good is dead-lettered. A throw (sink
 * settings or letter store unreachable) makes the mapping retry the batch: at-least-once.
 * The push lane (Web Push for attention requests, `src/relay/push/deliver-pushes.ts`) runs on
 * the same batch at the same moment, with its own circuits and the same live budget, so neither
 * lane waits for the other.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { deliverToBridges } from '../../src/relay/bridges/deliver-to-sinks.ts';
import { deliverPushes } from '../../src/relay/push/deliver-pushes.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { deliverablesOf } from '../../src/store/event-stream.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-bridges' });

/** The bridges handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event) => {
      const deliverables = deliverablesOf(event.Records);
      const [reports, pushes] = await Promise.all([deliverToBridges(runtime.bridges, deliverables), deliverPushes(runtime.push, deliverables)]);
      for (const push of pushes) {
        // Counts and the subscription's id only: an endpoint is a capability URL, never logged.
        if (push.retrying > 0 || push.dropped > 0 || push.gone) logger.info('push notifications not all accepted', { ...push });
        else logger.debug('push notifications sent', { ...push });
      }
      for (const report of reports) {
        // Counts and names only: targets and headers of sinks are never logged.
        if (report.parked > 0) logger.warn('bridge events dead-lettered', { ...report });
        else if (report.retrying > 0) logger.info('bridge events handed to the retry lane', { ...report });
        else logger.debug('bridge batch delivered', { ...report });
      }
      // Every record is done (delivered or dead-lettered); failures that must be retried threw.
      return { batchItemFailures: [] };
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-bridges', namespace: config.metricsNamespace }) }));
