/**
 * `functions/sinkretry`: the sink-retry worker, fed by the retry queue's event source mapping
 * (SQS, bounded maximum concurrency). Each message names one letter in a tenant's letter store;
 * the worker makes that letter's next attempt with the full request timeout, then removes,
 * reschedules (a delayed message) or buries it (`src/relay/bridges/retry-lane.ts`). A message
 * whose work threw (DynamoDB or the queue unreachable) is reported failed and comes back after
 * the visibility timeout; an unreadable one is dropped (it names nothing). A wake-up of the push
 * lane (`lane: "push"`) is that lane's letter (`src/relay/push/push-retry.ts`).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { retryLetter } from '../../src/relay/bridges/retry-lane.ts';
import { retryPushLetter } from '../../src/relay/push/push-retry.ts';
import type { SinkRetryWakeUp } from '../../src/relay/ports/sink-retry-queue.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-sinkretry' });

/** The retry handler over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<SQSEvent, SQSBatchResponse, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event) => {
      const failures: SQSBatchResponse['batchItemFailures'] = [];
      await Promise.all(
        event.Records.map(async (record) => {
          const wakeUp = wakeUpOf(record.body);
          if (wakeUp === undefined) {
            logger.warn('unreadable sink-retry message dropped', { messageId: record.messageId });
            return;
          }
          try {
            if (wakeUp.lane === 'push') {
              logger.debug('push retry', { ...(await retryPushLetter(runtime.push, wakeUp)) });
              return;
            }
            const report = await retryLetter(runtime.bridges, wakeUp);
            // Counts and names only: targets and headers of sinks are never logged.
            if (report.result === 'dead' || report.parked > 0) logger.warn('bridge events dead-lettered', { ...report });
            else logger.debug('sink retry', { ...report });
          } catch (error) {
            logger.error('sink retry failed; the message comes back', { tenant: wakeUp.tenant, letter: wakeUp.letter, error: error instanceof Error ? error.name : 'Error' });
            failures.push({ itemIdentifier: record.messageId });
          }
        }),
      );
      return { batchItemFailures: failures };
    });
}

function wakeUpOf(body: string): SinkRetryWakeUp | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<SinkRetryWakeUp>;
    if (typeof parsed.tenant !== 'string' || typeof parsed.letter !== 'string') return undefined;
    return { tenant: parsed.tenant, letter: parsed.letter, ...(parsed.lane === 'push' ? { lane: 'push' as const } : {}) };
  } catch {
    return undefined;
  }
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-sinkretry', namespace: config.metricsNamespace }) }));
