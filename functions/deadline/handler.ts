/**
 * `functions/deadline`: invoked asynchronously by the socket function's `$connect` for a
 * connection whose token expires while it may still be open (`src/gateway/lambda-deadlines.ts`).
 * Waits until the deadline and closes the connection with a `closing` frame (`token-expired`);
 * a deadline past this invocation's own timeout is waited on in part and handed on.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { deadlineOf, reachDeadline } from '../../src/relay/connection-deadline.ts';
import { lambdaDeadlines } from '../../src/gateway/lambda-deadlines.ts';
import type { ConnectionDeadlinesPort } from '../../src/relay/ports/index.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-deadline' });

/** What an invocation keeps back of its timeout for the close itself (or the hand-on). */
const MARGIN_MS = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The deadline handler over a runtime (the local stack keeps deadlines with timers instead).
 * A far deadline is handed on to this same function, named by its context.
 */
export function createHandler(runtime: RelayRuntime, handOnTo = (functionName: string): ConnectionDeadlinesPort => lambdaDeadlines({ functionName, region: runtime.config.region })) {
  return middy<unknown, void, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (event, context) => {
      const deadline = deadlineOf(event);
      if (deadline === undefined) {
        logger.warn('not a connection deadline; ignored');
        return;
      }
      const budgetMs = context.getRemainingTimeInMillis() - MARGIN_MS;
      const waitMs = deadline.atMs - runtime.now();
      if (waitMs > budgetMs) {
        await sleep(budgetMs);
        await handOnTo(context.functionName).schedule(deadline);
        return;
      }
      await sleep(waitMs);
      const closed = await reachDeadline(runtime, deadline);
      logger.info('connection deadline reached', { tenant: deadline.tenant, connectionId: deadline.connectionId, closed });
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-deadline', namespace: config.metricsNamespace }) }));
