/**
 * Per-tenant operational counts for the operator of a hosted relay. The relay records; an
 * adapter (`src/observability/relay-metrics.ts`) buffers and publishes them once per
 * invocation, so recording costs no call on the hot path.
 *
 * Cardinality: `tenant` is an operator-created tenant id, and `code` (refusals only) is one of
 * the spec's error codes, a closed set; no other value ever becomes a dimension.
 */
export type RelayMetricName =
  | 'EventsAdmitted'
  | 'EventsRefused'
  | 'Deliveries'
  | 'BackpressureDisconnects'
  | 'FanoutBudgetSheds'
  | 'SocketsOpened'
  | 'SocketsClosed'
  | 'StreamsOpened'
  | 'StreamsClosed'
  | 'CommandsRouted'
  | 'CommandsRefused'
  /** Web Push notifications a push service accepted (requests and their follow-ups). */
  | 'PushesSent'
  /** Notifications not accepted on an attempt (each failed attempt counts once). */
  | 'PushesFailed'
  /** Subscriptions removed because their push service answered 404 or 410. */
  | 'PushSubscriptionsRemoved';

/**
 * The refusal codes a count may carry: the error codes the relay answers events and commands
 * with (AEP-0003 §3.2 and §5, AEP-0004 §4). Anything else is published as `other`, so the
 * `code` dimension stays a closed set whatever a caller passes.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'invalid-event',
  'invalid-request',
  'event-too-large',
  'payload-too-large',
  'too-many-events',
  'unsupported-media-type',
  'version-unsupported',
  'unauthorized',
  'limit-exceeded',
  'unavailable',
  'no-route',
  'ambiguous',
  'unsupported',
]);

/** Extra dimensions of a count: only a refusal's error code (`code`, one of `REFUSAL_CODES`). */
export interface MetricDimensions {
  code?: string;
}

export interface RelayMetrics {
  /** Adds `value` (default 1) to a tenant's count. Never throws, never waits. */
  count(name: RelayMetricName, tenant: string, value?: number, dimensions?: MetricDimensions): void;
  /** Publishes what was counted since the last flush (the entry point calls it once per invocation). */
  flush(): void;
}

/** Records nothing: the default for runtimes built without an adapter (tests, the CLI). */
export const noMetrics: RelayMetrics = { count: () => undefined, flush: () => undefined };
