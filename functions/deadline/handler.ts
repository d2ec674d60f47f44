/**
 * `functions/deadline`: closes WebSocket connections when their token expires, with a `closing`
 * frame (`token-expired`, or `card-expired`). Invoked two ways:
 * - every minute by an EventBridge rule (a `Scheduled Event`, asynchronous): the sweep, which
 *   closes every deadline due within the horizon, each on time (`src/relay/deadline-sweep.ts`);
 * - by the deadline queue's event source mapping, with the near deadlines the socket function
 *   queued, each delivered at its time (`src/gateway/queued-deadlines.ts`): closes them.
 * Either way a deadline is closed once (`closeAtDeadline` takes it out of the index first). An
 * invocation never waits past its own time, and a queued deadline it could not close is left to
 * the sweep (the index still holds it), so queue messages are never reported failed.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { DEADLINE_HORIZON_MS } from '../../src/config/function-timeouts.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { closeAtDeadline, deadlineOf } from '../../src/relay/connections/connection-deadline.ts';
import { sweepDeadlines } from '../../src/relay/connections/deadline-sweep.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-deadline' });

/** What an invocation keeps back of its timeout for the closes themselves. */
const MARGIN_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The event an EventBridge schedule delivers (only its `detail-type` is read). */
function isScheduledEvent(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as Record<string, unknown>)['detail-type'] === 'Scheduled Event';
}

/** What the deadline queue's event source mapping delivers: a batch of SQS records. */
function isQueueEvent(event: unknown): event is SQSEvent {
  return typeof event === 'object' && event !== null && Array.isArray((event as { Records?: unknown }).Records);
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** `wait` is how the invocation waits for a deadline (the local stack's waits must not hold its process open at stop). */
export function createHandler(runtime: RelayRuntime, wait: (ms: number) => Promise<void> = sleep) {
  return middy<unknown, void, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event, context) => {
      const budgetMs = context.getRemainingTimeInMillis() - MARGIN_MS;
      if (isScheduledEvent(event)) {
        const outcome = await sweepDeadlines(runtime, {
          horizonMs: Math.min(DEADLINE_HORIZON_MS, budgetMs),
          sleep: wait,
          onFailure: (deadline, error) => logger.error('connection deadline close failed; left for the next sweep', { tenant: deadline.tenant, connectionId: deadline.connectionId, error: String(error) }),
        });
        logger.info('connection deadlines swept', { ...outcome });
        // A close that failed is back in the index; failing the invocation sends the sweep to
        // the on-failure queue, where an operator sees it (the next sweep retries the close).
        if (outcome.failed > 0) throw new Error(`${outcome.failed} connection deadline closes failed`);
        return;
      }
      if (!isQueueEvent(event)) {
        logger.warn('neither a sweep nor queued connection deadlines; ignored');
        return;
      }
      await Promise.all(
        event.Records.map(async (record) => {
          const deadline = deadlineOf(parsed(record.body));
          if (deadline === undefined) {
            logger.warn('unreadable connection deadline message dropped', { messageId: record.messageId });
            return;
          }
          // The message is held in whole seconds, rounded down: at most a second to wait here.
          const waitMs = deadline.atMs - runtime.now();
          if (waitMs > budgetMs) {
            // Farther than this invocation may wait: it stays in the index, where a sweep takes it.
            logger.info('connection deadline left to the sweep', { tenant: deadline.tenant, connectionId: deadline.connectionId, waitMs });
            return;
          }
          await wait(waitMs);
          try {
            const outcome = await closeAtDeadline(runtime, deadline);
            logger.info('connection deadline reached', { tenant: deadline.tenant, connectionId: deadline.connectionId, outcome });
          } catch (error) {
            // Back in the index (closeAtDeadline restores it): the next sweep closes it.
            logger.error('connection deadline close failed; left for the next sweep', { tenant: deadline.tenant, connectionId: deadline.connectionId, error: String(error) });
          }
        }),
      );
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-deadline', namespace: config.metricsNamespace }) }));
