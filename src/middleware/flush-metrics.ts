/**
 * Publishes the invocation's per-tenant metrics (`src/observability/relay-metrics.ts`) once it
 * ends, answered or failed: one EMF flush per invocation, never a call on the hot path.
 */
import type { MiddlewareObj } from '@middy/core';
import type { RelayMetrics } from '../relay/ports/metrics.ts';

export function flushMetrics<Event, Result>(metrics: RelayMetrics): MiddlewareObj<Event, Result> {
  const flush = async () => metrics.flush();
  return { after: flush, onError: flush };
}
