/**
 * The relay's per-tenant counts (`src/relay/ports/metrics.ts`) as CloudWatch embedded metric
 * format, through Powertools for AWS Lambda's Metrics: counting only adds to a map in memory;
 * `flush` prints the counts as EMF lines on stdout, which Lambda ships to CloudWatch Logs and
 * CloudWatch turns into metrics. No call to AWS is ever made for a metric.
 *
 * An EMF line carries one value per dimension, so a flush prints one line per tenant (and per
 * refusal code), holding every metric of that group. Dimensions are exactly `tenant`, or
 * `tenant` and `code`: the default `service` dimension is cleared so each metric has one
 * series per tenant (docs/operations.md, "Per-tenant metrics").
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DEFAULT_METRICS_NAMESPACE } from '../config/relay-config.ts';
import { REFUSAL_CODES } from '../relay/ports/metrics.ts';
import type { MetricDimensions, RelayMetricName, RelayMetrics } from '../relay/ports/metrics.ts';

/** Where no namespace is given: the local stack's. A deployed stack names its stage's (`AEP_METRICS_NAMESPACE`). */
export const METRICS_NAMESPACE = DEFAULT_METRICS_NAMESPACE;

interface Group {
  tenant: string;
  code?: string;
  counts: Map<RelayMetricName, number>;
}

export class EmfRelayMetrics implements RelayMetrics {
  private readonly powertools: Metrics;
  private groups = new Map<string, Group>();

  constructor(options: { service: string; namespace?: string }) {
    this.powertools = new Metrics({ namespace: options.namespace ?? METRICS_NAMESPACE, serviceName: options.service });
    this.powertools.clearDefaultDimensions();
  }

  count(name: RelayMetricName, tenant: string, value = 1, dimensions?: MetricDimensions): void {
    const given = dimensions?.code;
    // A closed set (docs/operations.md, "Per-tenant metrics"): an unexpected code never adds series.
    const code = given === undefined ? undefined : REFUSAL_CODES.has(given) ? given : 'other';
    const key = JSON.stringify([tenant, code ?? null]);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { tenant, ...(code === undefined ? {} : { code }), counts: new Map() };
      this.groups.set(key, group);
    }
    group.counts.set(name, (group.counts.get(name) ?? 0) + value);
  }

  flush(): void {
    const groups = this.groups;
    // Swapped first: counts recorded while this flush prints go to the next one.
    this.groups = new Map();
    for (const group of groups.values()) {
      this.powertools.addDimension('tenant', group.tenant);
      if (group.code !== undefined) this.powertools.addDimension('code', group.code);
      for (const [name, value] of group.counts) this.powertools.addMetric(name, MetricUnit.Count, value);
      this.powertools.publishStoredMetrics();
    }
  }
}

/** A function's metrics, flushed by its handler once per invocation, in the configuration's namespace (`RelayConfig.metricsNamespace`). */
export function createRelayMetrics(options: { service: string; namespace?: string }): EmfRelayMetrics {
  return new EmfRelayMetrics(options);
}
