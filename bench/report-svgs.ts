/** The bench report's SVG plots, from the measured runs. */
import type { IngestPath } from './cost.ts';
import { INGEST_LABELS } from './cost.ts';
import type { Distribution } from './latency.ts';
import { renderScaleSvg } from './scale-report.ts';
import { lineChart, stackCharts } from './svg.ts';
import type { Series } from './svg.ts';
import { deriveAll } from './results-model.ts';
import type { BenchResults, Derived } from './results-model.ts';

export const PATHS: readonly IngestPath[] = ['single', 'batch100', 'websocket'];
export const COLORS: Record<IngestPath, string> = { single: '#1f77b4', batch100: '#2ca02c', websocket: '#d62728' };

export function renderSvgs(results: BenchResults): Record<string, string> {
  const derived = deriveAll(results);
  const counts = [...new Set(results.costGrid.map((run) => run.subscribers))].sort((a, b) => a - b);
  const categories = counts.map(String);
  const xAxis = { kind: 'category' as const, categories };
  const xLabel = 'WebSocket subscribers (half session-filtered, half type-filtered)';
  const perPath = (name: string, value: (row: Derived) => number, dashed = false): Series[] =>
    PATHS.map((path) => ({
      name: `${name}, ${INGEST_LABELS[path]}`,
      color: COLORS[path],
      dashed,
      points: derived.filter((row) => row.ingest === path).map((row) => ({ x: counts.indexOf(row.subscribers), y: value(row) })),
    }));
  const costSvg = stackCharts([
    lineChart([...perPath('write units', (row) => row.writeUnits), ...perPath('read units', (row) => row.readUnits, true)], {
      title: 'DynamoDB request units per 1,000 ingested events (all functions)',
      xLabel,
      yLabel: 'request units per 1,000 events',
      xAxis,
    }),
    lineChart(perPath('fan-out read units', (row) => row.fanoutReadUnits), {
      title: 'Fan-out read units per 1,000 ingested events',
      xLabel,
      yLabel: 'read units per 1,000 events',
      xAxis,
    }),
  ]);
  const batchRows = derived.filter((row) => row.ingest === 'batch100');
  const postsSvg = lineChart(
    [
      { name: 'PostToConnection calls (any ingest path)', color: '#9467bd', points: batchRows.map((row) => ({ x: counts.indexOf(row.subscribers), y: row.posts })) },
      ...perPath('invocations', (row) => row.invocations.total, true),
    ],
    {
      title: 'PostToConnection calls and Lambda invocations per 1,000 events',
      xLabel,
      yLabel: 'per 1,000 events',
      xAxis,
    },
  );
  const sweepCounts = [...new Set(results.sweeps.map((run) => run.unmatched))].sort((a, b) => a - b);
  const sweepSeries: Series[] = (['session-unmatched', 'type-unmatched'] as const).map((kind) => ({
    name: kind === 'session-unmatched' ? 'session-filtered (other sessions)' : 'type-filtered (attention.*)',
    color: kind === 'session-unmatched' ? '#2ca02c' : '#ff7f0e',
    points: results.sweeps
      .filter((run) => run.kind === kind)
      .map((run) => ({ x: sweepCounts.indexOf(run.unmatched), y: run.usage.functions.fanout.invocations > 0 ? run.usage.functions.fanout.readUnits / run.usage.functions.fanout.invocations : 0 })),
  }));
  const sweepSvg = lineChart(sweepSeries, {
    title: 'Fan-out read units per batch vs subscriptions that cannot match',
    xLabel: 'subscriptions that cannot match (plus one that matches)',
    yLabel: 'fan-out read units per stream batch',
    xAxis: { kind: 'category', categories: sweepCounts.map(String) },
  });
  const { delivery, command } = results.latency;
  const cdf = (dist: Distribution) => dist.samples.map((value, index) => ({ x: value, y: ((index + 1) / dist.samples.length) * 100 }));
  const xMax = Math.max(delivery.websocket.p99, delivery.sse.p99, command.p99) * 1.15;
  const latencySvg = lineChart(
    [
      { name: 'POST → WebSocket', color: '#1f77b4', points: cdf(delivery.websocket), markers: false },
      { name: 'POST → SSE', color: '#2ca02c', points: cdf(delivery.sse), markers: false },
      { name: 'command round trip', color: '#d62728', points: cdf(command), markers: false },
    ],
    {
      title: 'Latency on the local stack (cumulative distribution)',
      xLabel: 'milliseconds, this machine\'s (axis cut at 1.15 × the largest p99; the report states them in poll periods)',
      yLabel: 'percent of samples at or below',
      xAxis: { kind: 'linear', max: xMax },
      yMax: 100,
      yGuides: [
        { y: 50, label: 'p50' },
        { y: 95, label: 'p95' },
        { y: 99, label: 'p99' },
      ],
    },
  );
  return {
    'cost-vs-subscribers.svg': costSvg,
    'posts-vs-subscribers.svg': postsSvg,
    'fanout-reads.svg': sweepSvg,
    'latency.svg': latencySvg,
    ...(results.fanoutScale === undefined || results.fanoutScale.length === 0 ? {} : { 'fanout-scale.svg': renderScaleSvg(results.fanoutScale) }),
  };
}

