/**
 * `functions/fanoutlane`: a delivery lane worker. Fan-out invokes it synchronously with one
 * lane's work of a batch (`src/relay/fanout/lane-work.ts`) when the batch has more deliveries
 * than one invocation posts in time; it runs them as fan-out would (the same per-connection
 * order, backpressure and parking rules, `deliver-lane.ts`) and answers the lane's counts. It
 * reads no stream and no subscription: everything it needs is in the work.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { flushMetrics } from '../../src/middleware/flush-metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import type { FanoutCounts } from '../../src/relay/fanout/connection-delivery.ts';
import { deliverLane } from '../../src/relay/fanout/deliver-lane.ts';
import { decodeLaneWork } from '../../src/relay/fanout/lane-work.ts';
import type { LaneWork } from '../../src/relay/fanout/lane-work.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-fanoutlane' });

/** The lane handler over a runtime (the local stack's worker processes inject their own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return middy<LaneWork, FanoutCounts, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(runtime.metrics))
    .handler(async (work, context) => {
      const counts = await deliverLane(runtime, logger.child({ requestId: context.awsRequestId }), decodeLaneWork(work));
      logger.debug('delivery lane', { connections: work.connections.length, deliverables: work.deliverables.length, ...counts });
      return counts;
    });
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-fanoutlane', namespace: config.metricsNamespace }) }));
