/**
 * `functions/deadline`: closes WebSocket connections when their token expires, with a `closing`
 * frame (`token-expired`). Invoked two ways, both asynchronous:
 * - every minute by an EventBridge rule (a `Scheduled Event`): the sweep, which closes every
 *   deadline due within the horizon, each on time (`src/relay/deadline-sweep.ts`);
 * - by the socket function's `$connect`, with one deadline due within the horizon
 *   (`src/gateway/lambda-deadlines.ts`): waits for it and closes.
 * Either way a deadline is closed once (`closeAtDeadline` takes it out of the index first). An
 * invocation never waits past its own time: what it cannot reach is left to the next sweep.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { DEADLINE_HORIZON_MS } from '../../src/config/function-timeouts.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { closeAtDeadline, deadlineOf } from '../../src/relay/connection-deadline.ts';
import { sweepDeadlines } from '../../src/relay/deadline-sweep.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-deadline' });

/** What an invocation keeps back of its timeout for the closes themselves. */
const MARGIN_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The event an EventBridge schedule delivers (only its `detail-type` is read). */
function isScheduledEvent(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as Record<string, unknown>)['detail-type'] === 'Scheduled Event';
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
      const deadline = deadlineOf(event);
      if (deadline === undefined) {
        logger.warn('neither a sweep nor a connection deadline; ignored');
        return;
      }
      const waitMs = deadline.atMs - runtime.now();
      if (waitMs > budgetMs) {
        // Farther than this invocation may wait: it stays in the index, where a sweep takes it.
        logger.info('connection deadline left to the sweep', { tenant: deadline.tenant, connectionId: deadline.connectionId, waitMs });
        return;
      }
      await wait(waitMs);
      const outcome = await closeAtDeadline(runtime, deadline);
      logger.info('connection deadline reached', { tenant: deadline.tenant, connectionId: deadline.connectionId, outcome });
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-deadline', namespace: config.metricsNamespace }) }));
