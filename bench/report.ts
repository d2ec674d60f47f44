/**
 * Turns the measured runs into BENCHMARKS.md, bench/results.json and the SVG plots: derived
 * per-1,000-event figures, the dollar estimate, and the tables.
 */
import type { StackUsage } from '../local/usage.ts';
import { FUNCTION_NAMES } from '../local/usage.ts';
import type { CpuResult } from './cpu.ts';
import type { CostRun, IngestPath, SweepRun } from './cost.ts';
import { INGEST_LABELS } from './cost.ts';
import type { DeliveryLatency, Distribution } from './latency.ts';
import type { FanoutScaleRun } from './fanout-scale.ts';
import { historyMarkdown } from './history.ts';
import type { HistoryBench } from './history.ts';
import type { PausedConsumerResult } from './paused-consumer.ts';
import { renderScaleMarkdown, renderScaleSvg } from './scale-report.ts';
import { bridgeCostLines } from './bridges.ts';
import type { BridgeCostRun } from './bridges.ts';
import { MEMORY_MB, PRICE_TABLE_DATE, PRICES } from './prices.ts';
import { lineChart, stackCharts } from './svg.ts';
import { TYPE_FILTERS } from './workload.ts';
import type { Series } from './svg.ts';

export interface RunInfo {
  date: string;
  commit: string;
  dirty: boolean;
  machine: { os: string; cpus: number; cpuModel: string; memoryGiB: number; node: string };
  runtimeSeconds: number;
  settings: Record<string, string | number>;
}

export interface StandingCost {
  seconds: number;
  /** Usage while one idle SSE stream and one idle WebSocket subscriber stayed open. */
  usage: StackUsage;
}

export interface BenchResults {
  run: RunInfo;
  costGrid: CostRun[];
  sweeps: SweepRun[];
  standing: StandingCost;
  latency: { delivery: DeliveryLatency; command: Distribution };
  cpu: CpuResult;
  /** Absent in results from before these scenarios existed. */
  fanoutScale?: FanoutScaleRun[];
  pausedConsumer?: PausedConsumerResult;
  /** Added cost of bridge sinks (absent in results from before the bridges). */
  bridges?: BridgeCostRun[];
  /** History costs (`bench/history.ts`); absent in results saved before it existed. */
  history?: HistoryBench;
}

export interface DollarBreakdown {
  dynamoWrites: number;
  dynamoReads: number;
  lambdaRequests: number;
  lambdaDuration: number;
  websocketMessages: number;
  httpRequests: number;
  total: number;
}

export interface Derived {
  ingest: IngestPath;
  subscribers: number;
  /** All per 1,000 ingested events. */
  writeUnits: number;
  readUnits: number;
  fanoutReadUnits: number;
  dynamoCalls: number;
  invocations: Record<(typeof FUNCTION_NAMES)[number] | 'total', number>;
  posts: number;
  deliveries: number;
  writeUnitsPerEvent: number;
  readUnitsPerDelivery: number | undefined;
  fanoutReadUnitsPerDelivery: number | undefined;
  recordsPerFanoutBatch: number;
  dollarsPerMillion: DollarBreakdown;
}

const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0);

export function dollarsPerMillion(usage: StackUsage, events: number): DollarBreakdown {
  const scale = 1_000_000 / events;
  const gbSeconds = sum(FUNCTION_NAMES.map((name) => (usage.functions[name].billedMs / 1000) * (MEMORY_MB[name] / 1024)));
  const delivered = usage.postToConnection.byStatus['200'] ?? 0;
  const breakdown = {
    dynamoWrites: (usage.dynamo.writeUnits * scale * PRICES.dynamoWrite.usd) / 1e6,
    dynamoReads: (usage.dynamo.readUnits * scale * PRICES.dynamoRead.usd) / 1e6,
    lambdaRequests: (sum(FUNCTION_NAMES.map((name) => usage.functions[name].invocations)) * scale * PRICES.lambdaRequest.usd) / 1e6,
    lambdaDuration: gbSeconds * scale * PRICES.lambdaArmGbSecond.usd,
    // Received: every inbound message invokes $default; sent: every delivered PostToConnection.
    websocketMessages: (((usage.socketRoutes['$default'] ?? 0) + delivered) * scale * PRICES.websocketMessage.usd) / 1e6,
    httpRequests: (usage.functions.http.invocations * scale * PRICES.httpApiRequest.usd) / 1e6,
  };
  return { ...breakdown, total: sum(Object.values(breakdown)) };
}

export function derive(run: CostRun): Derived {
  const per1000 = 1000 / run.events;
  const { usage } = run;
  const invocations = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, usage.functions[name].invocations * per1000])) as Derived['invocations'];
  invocations.total = sum(FUNCTION_NAMES.map((name) => invocations[name]));
  const deliveries = run.receivedDeliveries;
  return {
    ingest: run.ingest,
    subscribers: run.subscribers,
    writeUnits: usage.dynamo.writeUnits * per1000,
    readUnits: usage.dynamo.readUnits * per1000,
    fanoutReadUnits: usage.functions.fanout.readUnits * per1000,
    dynamoCalls: usage.dynamo.calls * per1000,
    invocations,
    posts: usage.postToConnection.calls * per1000,
    deliveries: deliveries * per1000,
    writeUnitsPerEvent: usage.dynamo.writeUnits / run.events,
    readUnitsPerDelivery: deliveries > 0 ? usage.dynamo.readUnits / deliveries : undefined,
    fanoutReadUnitsPerDelivery: deliveries > 0 ? usage.functions.fanout.readUnits / deliveries : undefined,
    recordsPerFanoutBatch: usage.functions.fanout.invocations > 0 ? usage.fanoutRecords / usage.functions.fanout.invocations : 0,
    dollarsPerMillion: dollarsPerMillion(usage, run.events),
  };
}

// ---- formatting ----

const fixed = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
const grouped = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const dollars = (value: number) => (value >= 1 ? `$${value.toFixed(2)}` : value >= 0.01 ? `$${value.toFixed(3)}` : `$${value.toFixed(4)}`);
const ms = (value: number) => `${value.toFixed(0)} ms`;

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, index) => ((align?.[index] ?? (index === 0 ? 'l' : 'r')) === 'r' ? '---:' : ':---'));
  return [`| ${header.join(' | ')} |`, `| ${rule.join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

const PATHS: readonly IngestPath[] = ['single', 'batch100', 'websocket'];
const COLORS: Record<IngestPath, string> = { single: '#1f77b4', batch100: '#2ca02c', websocket: '#d62728' };

export function renderSvgs(results: BenchResults): Record<string, string> {
  const derived = results.costGrid.map(derive);
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
      xLabel: 'milliseconds (axis cut at 1.15 × the largest p99)',
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

export function renderMarkdown(results: BenchResults): string {
  const { run } = results;
  const derived = results.costGrid.map(derive);
  const find = (path: IngestPath, subscribers: number) => derived.find((row) => row.ingest === path && row.subscribers === subscribers);
  const counts = [...new Set(results.costGrid.map((row) => row.subscribers))].sort((a, b) => a - b);
  const maxCount = counts[counts.length - 1] ?? 0;
  const midCount = counts.includes(10) ? 10 : maxCount;
  const wruPerEvent = (path: IngestPath) => sum(derived.filter((row) => row.ingest === path).map((row) => row.writeUnitsPerEvent)) / Math.max(1, derived.filter((row) => row.ingest === path).length);
  const sweep = (kind: SweepRun['kind']) => results.sweeps.filter((row) => row.kind === kind).sort((a, b) => a.unmatched - b.unmatched);
  const callsPerBatch = (row: SweepRun) => (row.usage.functions.fanout.invocations > 0 ? row.usage.functions.fanout.dynamoCalls / row.usage.functions.fanout.invocations : 0);
  const perBatch = (row: SweepRun) => (row.usage.functions.fanout.invocations > 0 ? row.usage.functions.fanout.readUnits / row.usage.functions.fanout.invocations : 0);
  const sessionSweep = sweep('session-unmatched');
  const typeSweep = sweep('type-unmatched');
  const { delivery, command } = results.latency;
  const lines: string[] = [];
  const push = (...text: string[]) => lines.push(...text);

  push(
    '# Benchmarks',
    '',
    `Generated by \`npm run bench\` (\`bench/run.ts\`); do not edit by hand. Machine-readable results: [bench/results.json](bench/results.json).`,
    '',
    `- **Date:** ${run.date}`,
    `- **Commit measured:** \`${run.commit}\`${run.dirty ? ' (dirty: the working tree had uncommitted changes)' : ''}`,
    `- **Machine:** ${run.machine.os}; ${run.machine.cpus} × ${run.machine.cpuModel}; ${run.machine.memoryGiB.toFixed(1)} GiB memory; Node ${run.machine.node}`,
    `- **Bench run time:** ${Math.floor(run.runtimeSeconds / 60)} min ${Math.round(run.runtimeSeconds % 60)} s (DynamoDB Local start included)`,
    '',
    '## Headline figures',
    '',
  );
  const headline: string[][] = [
    ['**Write units per ingested event**', ...PATHS.map((path) => `**${fixed(wruPerEvent(path))}**`)],
    [`**Read units per delivered event**, ${midCount} subscribers`, ...PATHS.map((path) => `**${fixed(find(path, midCount)?.readUnitsPerDelivery)}**`)],
  ];
  if (maxCount !== midCount) headline.push([`Read units per delivered event, ${maxCount} subscribers`, ...PATHS.map((path) => fixed(find(path, maxCount)?.readUnitsPerDelivery))]);
  headline.push([`Fan-out read units per delivered event, ${maxCount} subscribers`, ...PATHS.map((path) => fixed(find(path, maxCount)?.fanoutReadUnitsPerDelivery, 3))]);
  for (const count of [...new Set([0, midCount, maxCount])]) {
    headline.push([`Estimated $ per million events, ${count} subscribers`, ...PATHS.map((path) => { const row = find(path, count); return row === undefined ? '–' : dollars(row.dollarsPerMillion.total); })]);
  }
  // Reads per request / message, over the 0-subscriber runs (nothing else reads then but the ingest function).
  const requestReads = (path: IngestPath): string => {
    const run = results.costGrid.find((row) => row.ingest === path && row.subscribers === 0) ?? results.costGrid.find((row) => row.ingest === path);
    if (run === undefined) return '–';
    const http = run.usage.functions.http;
    const messages = run.usage.socketRoutes['$default'] ?? 0;
    if (path === 'websocket') return messages > 0 ? `${fixed(run.usage.functions.socket.readUnits / messages)} per message` : '–';
    return http.invocations > 0 ? `${fixed(http.readUnits / http.invocations)} per request` : '–';
  };
  headline.push(['**Read units per HTTP request / WebSocket message** (authentication and connection state)', ...PATHS.map((path) => `**${requestReads(path)}**`)]);
  push(table(['', ...PATHS.map((path) => INGEST_LABELS[path])], headline), '');
  const firstSession = sessionSweep[0];
  const lastSession = sessionSweep[sessionSweep.length - 1];
  const firstType = typeSweep[0];
  const lastType = typeSweep[typeSweep.length - 1];
  if (firstSession !== undefined && lastSession !== undefined && firstType !== undefined && lastType !== undefined) {
    push(
      `- **Fan-out reads do not grow with session-filtered subscriptions that cannot match:** ${fixed(perBatch(firstSession))} read units per fan-out batch with ${firstSession.unmatched} of them, ${fixed(perBatch(lastSession))} with ${grouped(lastSession.unmatched)} (their session partitions are never read). With type-filtered subscriptions that cannot match (type \`attention.*\`) it is ${fixed(perBatch(firstType))} with ${firstType.unmatched} of them and ${fixed(perBatch(lastType))} with ${grouped(lastType.unmatched)}: they are indexed under the first segment of the types they name (\`attention\`), and a batch reads only the segments its events carry (\`tool\`, \`progress\`).`,
    );
  }
  const batchMax = find('batch100', maxCount);
  if (batchMax !== undefined && batchMax.dollarsPerMillion.total > 0) {
    const share = (value: number) => {
      const percent = (value / batchMax.dollarsPerMillion.total) * 100;
      return percent < 1 ? '<1%' : `${Math.round(percent)}%`;
    };
    push(
      `- **Where the dollars go** (NDJSON batches, ${maxCount} subscribers, ${dollars(batchMax.dollarsPerMillion.total)} per million events): API Gateway WebSocket messages ${share(batchMax.dollarsPerMillion.websocketMessages)}, DynamoDB writes ${share(batchMax.dollarsPerMillion.dynamoWrites)}, DynamoDB reads ${share(batchMax.dollarsPerMillion.dynamoReads)}, Lambda ${share(batchMax.dollarsPerMillion.lambdaRequests + batchMax.dollarsPerMillion.lambdaDuration)}. Each delivery is one WebSocket message, so the bill follows deliveries; the write cost is fixed per event.`,
    );
  }
  push(
    `- **Latency on the local stack** (stream poll every ${run.settings.AEP_LOCAL_POLL_MS} ms, SSE inbox poll every ${run.settings.AEP_SSE_POLL_MS} ms): POST → WebSocket p50/p95/p99 ${ms(delivery.websocket.p50)} / ${ms(delivery.websocket.p95)} / ${ms(delivery.websocket.p99)}; POST → SSE ${ms(delivery.sse.p50)} / ${ms(delivery.sse.p95)} / ${ms(delivery.sse.p99)}; command round trip ${ms(command.p50)} / ${ms(command.p95)} / ${ms(command.p99)}.`,
    `- **Handler CPU:** ${fixed(results.cpu.usPerEvent.pipeline, 1)} µs per event for envelope validation, matching against ${results.cpu.filters} compiled filters and down-leveling (golden corpus, ${fixed(results.cpu.matchesPerEvent, 1)} matches per event${results.cpu.repeats === undefined ? '' : `; median of ${results.cpu.repeats.pipelineUsPerEvent.length} repeats, spread ${fixed(Math.min(...results.cpu.repeats.pipelineUsPerEvent), 1)}–${fixed(Math.max(...results.cpu.repeats.pipelineUsPerEvent), 1)}, taken before the stack starts`}).`,
    '',
    '## How to read this',
    '',
    '- Every figure comes from the real handlers running in-process against DynamoDB Local and the local API Gateway (`local/stack.ts`). Nothing here ran on AWS.',
    '- **Request units** are what DynamoDB reported through `ReturnConsumedCapacity` on every call the five functions made (`http`, `authorizer`, `socket`, `fanout`, `stream`), summed by the per-runtime `CapacityMeter`s. DynamoDB Local sizes consumed capacity by the service\'s rules: 1 WRU per KB written, for the item and for each index; 1 RRU per 4 KB read strongly consistently (every read here is).',
    '- **Failed conditional writes are missing.** DynamoDB does not return `ConsumedCapacity` with a `ConditionalCheckFailedException`, yet bills the write. The counts below therefore omit, for example, a duplicate event\'s refused put or a session claim that already exists. In these scenarios, events are never duplicated, so that gap is small.',
    '- **Reads that find nothing are reported as 0 units.** DynamoDB Local reports no capacity for a `Query` that reads no item, such as fan-out querying a subscription partition that is empty, or an idle SSE stream polling its inbox. DynamoDB may bill such a request a minimum (at most 1 RRU when strongly consistent). The tables therefore also count DynamoDB calls, so you can bound that gap.',
    `- **Per 1,000 events:** every cost scenario ingests ${run.settings['events per cost scenario']} events into one session, and its totals are reported per 1,000 ingested events. **Write units per ingested event** = all write units ÷ events. **Read units per delivered event** = all read units (ingest + fan-out) ÷ events delivered to subscribers. Fan-out-only figures are given separately.`,
    `- **Subscribers** are WebSocket connections with one subscription each. Half are session-filtered: one is on the events\' session (so there are deliveries), and the rest are on sessions that never receive an event. The other half are type-filtered, cycling through ${TYPE_FILTERS.map((type) => `\`${type}\``).join(', ')}. The events alternate \`tool.requested\` / \`progress.status\`, so \`tool.*\` and \`progress.*\` each match half of them and the other patterns match none. One set of subscribers serves the three ingest paths in turn, each with its own counters. Opening them (connect, hello, subscribe) is measured separately as setup and is not in the per-event figures.`,
    '- **Posts** are PostToConnection calls to the `@connections` endpoint; **deliveries** are events the subscribers received (one post per matching connection and event).',
    '- Fan-out reads the subscriptions **once per stream batch**, not per event. Batch sizes depend on how fast events arrive and how often the stream is polled (here every ' +
      `${run.settings.AEP_LOCAL_POLL_MS} ms; on AWS, Lambda polls a shard about 4 times a second and batches up to 100 records), so fan-out reads per event fall as traffic rises.`,
    '- **Measured:** request units, invocations, posts, deliveries, handler wall time, latency and CPU. **Assumed:** function memory sizes, Arm pricing, and that local handler durations stand in for Lambda\'s. DynamoDB Local answers more slowly than DynamoDB, so duration dollars are likely high. Prices are list prices (see the price table), with free tiers ignored.',
    '',
  );

  // Cost grid.
  push('## Cost per 1,000 ingested events', '', `Each row is one scenario, scaled to 1,000 ingested events: an ingest path with ${counts.join(', ')} WebSocket subscribers. "DynamoDB calls" counts every request the handlers made, whatever it consumed.`, '');
  push(
    table(
      ['ingest', 'subscribers', 'write units', 'read units', 'of which fan-out', 'DynamoDB calls', 'http', 'authorizer', 'socket', 'fanout', 'posts', 'deliveries', 'WRU / event', 'RRU / delivered', 'records / fan-out batch'],
      derived.map((row) => [
        INGEST_LABELS[row.ingest],
        String(row.subscribers),
        grouped(row.writeUnits, 1),
        grouped(row.readUnits, 1),
        grouped(row.fanoutReadUnits, 1),
        grouped(row.dynamoCalls),
        grouped(row.invocations.http),
        grouped(row.invocations.authorizer),
        grouped(row.invocations.socket),
        grouped(row.invocations.fanout),
        grouped(row.posts),
        grouped(row.deliveries),
        fixed(row.writeUnitsPerEvent),
        fixed(row.readUnitsPerDelivery),
        fixed(row.recordsPerFanoutBatch, 1),
      ]),
    ),
    '',
    'Columns `http` to `fanout` count Lambda invocations per 1,000 events; `socket` counts `$default` invocations (one per emitted WebSocket message). No authorizer invocations appear because connections are opened during setup.',
    '',
    '![DynamoDB request units per 1,000 events against subscribers](bench/cost-vs-subscribers.svg)',
    '',
    '![PostToConnection calls and invocations per 1,000 events against subscribers](bench/posts-vs-subscribers.svg)',
    '',
    'How they grow: write units per event do not depend on subscribers (fan-out writes nothing for WebSocket subscribers). Posts grow with the number of *matching* connections. Fan-out read units grow with the size of the tenant\'s unpinned (type-filtered) subscriptions, read once per batch. Session-filtered subscriptions on other sessions add nothing.',
    '',
  );

  // Where the units go.
  push('### Where the units go', '', `Per 1,000 events with ${midCount} subscribers, by function (request units, invocations, and handler wall time on this machine):`, '');
  const perFunctionRows: string[][] = [];
  for (const path of PATHS) {
    const runRow = results.costGrid.find((row) => row.ingest === path && row.subscribers === midCount);
    if (runRow === undefined) continue;
    const per1000 = 1000 / runRow.events;
    for (const name of FUNCTION_NAMES) {
      const usage = runRow.usage.functions[name];
      if (usage.invocations === 0 && usage.readUnits === 0 && usage.writeUnits === 0) continue;
      perFunctionRows.push([
        INGEST_LABELS[path],
        name,
        grouped(usage.writeUnits * per1000, 1),
        grouped(usage.readUnits * per1000, 1),
        grouped(usage.dynamoCalls * per1000),
        grouped(usage.invocations * per1000),
        usage.invocations > 0 ? `${(usage.durationMs / usage.invocations).toFixed(1)} ms` : '–',
      ]);
    }
  }
  push(
    table(['ingest', 'function', 'write units', 'read units', 'DynamoDB calls', 'invocations', 'mean duration'], perFunctionRows, ['l', 'l', 'r', 'r', 'r', 'r', 'r']),
    '',
    'At the measured commit, the numbers decompose as follows. An event is one conditional `PutItem` into the events table, keyed by its position in its session, with no index: 1 WRU for events up to 1 KB (plus, once a minute per process and session, the session registry refresh). Every HTTP request resolves its bearer token with one strongly consistent `GetItem` of the token lookup, which carries its tenant\'s disabled flag: 1 RRU per request; batching amortises it. Every WebSocket message reads its connection record (its principal comes from the authorizer context API Gateway attaches to every message): 1 RRU per message. Fan-out issues one `Query` per partition per batch: the tenant\'s unconstrained subscriptions, one per session in the batch, and one per first type segment in the batch.',
    '',
  );

  // Sweeps.
  push(
    '## Fan-out reads and subscriptions that cannot match',
    '',
    `One WebSocket subscriber on the events' session, plus N subscriptions that can never match: either **session-filtered** on other sessions, or **type-filtered** on \`attention.*\`. Each run ingests ${sweep('session-unmatched')[0]?.events ?? 0} events in NDJSON batches of 100. Only the fan-out function's reads are shown. To keep setup fast, the N subscriptions are written with the relay's own \`SubscriptionStore.addSubscription\` and handed to live, exactly as the socket handler does on \`subscribe\`. They sit on connection records without a socket, 32 each (the per-connection limit); as they never match, nothing is posted to them.`,
    '',
    table(
      ['subscriptions that cannot match', 'session-filtered: fan-out RRU / batch', 'session-filtered: fan-out RRU / event', 'type-filtered: fan-out RRU / batch', 'type-filtered: fan-out RRU / event', 'fan-out batches (session / type)', 'fan-out DynamoDB calls / batch (session / type)'],
      sessionSweep.map((row, index) => {
        const other = typeSweep[index];
        const perEvent = (entry: SweepRun | undefined) => (entry === undefined ? undefined : entry.usage.functions.fanout.readUnits / entry.events);
        return [
          grouped(row.unmatched),
          fixed(perBatch(row)),
          fixed(perEvent(row), 3),
          other === undefined ? '–' : fixed(perBatch(other)),
          fixed(perEvent(other), 3),
          `${row.usage.functions.fanout.invocations} / ${other?.usage.functions.fanout.invocations ?? '–'}`,
          `${fixed(callsPerBatch(row), 1)} / ${other === undefined ? '–' : fixed(callsPerBatch(other), 1)}`,
        ];
      }),
    ),
    '',
    '![Fan-out read units per batch against subscriptions that cannot match](bench/fanout-reads.svg)',
    '',
    'A batch reads the tenant\'s unconstrained-subscription partition, one partition per session in the batch, and one per first type segment in the batch (`tool`, `progress` here). With one session per batch, that is a constant for session-filtered subscribers, however many sit on other sessions, and for type-filtered subscribers on types the batch does not carry, however many there are. Subscriptions that can match the batch are read (1 RRU per 4 KB, strongly consistent), as they are posted to anyway.',
    '',
  );

  // Setup and standing.
  const setupRun = results.costGrid.find((row) => row.ingest === 'single' && row.subscribers === maxCount);
  const standing = results.standing;
  const sseReadsPerHour = (standing.usage.functions.stream.readUnits / standing.seconds) * 3600;
  const sseCallsPerHour = (standing.usage.functions.stream.dynamoCalls / standing.seconds) * 3600;
  const sseLambdaPerHour = 3600 * (MEMORY_MB.stream / 1024) * PRICES.lambdaArmGbSecond.usd;
  const connectionHour = (60 * PRICES.websocketConnectionMinute.usd) / 1e6;
  push('## Setup and standing costs', '');
  if (setupRun !== undefined && setupRun.subscribers > 0) {
    const n = setupRun.subscribers;
    const s = setupRun.setup;
    push(
      `Opening one subscriber (WebSocket connect with the authorizer, hello, one subscribe), averaged over ${n} subscribers (the totals also hold the one emitter connection, opened with them): ` +
        `${fixed(s.dynamo.writeUnits / n)} write units, ${fixed(s.dynamo.readUnits / n)} read units, ${fixed(s.functions.authorizer.invocations / n)} authorizer and ${fixed(s.functions.socket.invocations / n)} socket invocations, ${fixed(s.postToConnection.calls / n)} posts (the hello and subscribed replies).`,
      '',
    );
  }
  push(
    table(
      ['held open, idle', 'measured', 'per hour'],
      [
        ['WebSocket subscriber', `${grouped(standing.usage.functions.socket.dynamoCalls)} DynamoDB calls in ${standing.seconds} s (nothing polls)`, `$${connectionHour.toFixed(6)} of connection minutes`],
        [
          'SSE stream (`GET /stream`)',
          `${fixed(standing.usage.functions.stream.readUnits)} read units reported over ${grouped(standing.usage.functions.stream.dynamoCalls)} DynamoDB calls in ${standing.seconds} s (an inbox poll every ${run.settings.AEP_SSE_POLL_MS} ms)`,
          `${grouped(sseCallsPerHour)} calls: ${dollars((sseReadsPerHour * PRICES.dynamoRead.usd) / 1e6)} as reported, at most ${dollars((sseCallsPerHour * PRICES.dynamoRead.usd) / 1e6)} if each empty poll were billed 1 RRU; plus ${dollars(sseLambdaPerHour)} of Lambda duration at ${MEMORY_MB.stream} MB (assumed: the function runs for the stream's whole life)`,
        ],
      ],
      ['l', 'l', 'l'],
    ),
    '',
    'An idle WebSocket subscriber costs only connection minutes. An SSE stream is a running function that polls its inbox, so it costs duration and reads for as long as it is open.',
    '',
  );

  // Dollars.
  push(
    '## Dollar estimate per million events',
    '',
    `Published on-demand list prices, US East (N. Virginia), compiled ${PRICE_TABLE_DATE}; DynamoDB on-demand rates are those in force since the 2024-11-01 reduction. Free tiers and volume tiers are ignored. Check the pages before relying on them.`,
    '',
    table(
      ['item', 'price (USD)', 'per', 'source'],
      Object.values(PRICES).map((price) => [price.item, String(price.usd), price.per, price.source]),
      ['l', 'r', 'l', 'l'],
    ),
    '',
    `Assumed function memory: ${Object.entries(MEMORY_MB).map(([name, mb]) => `${name} ${mb} MB`).join(', ')}, on Arm (as \`infra/constructs/relay-functions.ts\` declares them). Duration is the measured local handler time, billed per invocation rounded up to 1 ms.`,
    '',
    table(
      ['ingest', 'subscribers', 'DynamoDB writes', 'DynamoDB reads', 'Lambda requests', 'Lambda duration', 'WebSocket messages', 'HTTP API requests', 'total'],
      derived.map((row) => [
        INGEST_LABELS[row.ingest],
        String(row.subscribers),
        dollars(row.dollarsPerMillion.dynamoWrites),
        dollars(row.dollarsPerMillion.dynamoReads),
        dollars(row.dollarsPerMillion.lambdaRequests),
        dollars(row.dollarsPerMillion.lambdaDuration),
        dollars(row.dollarsPerMillion.websocketMessages),
        dollars(row.dollarsPerMillion.httpRequests),
        `**${dollars(row.dollarsPerMillion.total)}**`,
      ]),
    ),
    '',
    '- **Measured:** the counts behind each column: request units, invocations, WebSocket messages received (`$default` invocations) and sent (delivered posts), HTTP requests, and handler durations on this machine.',
    '- **Assumed:** the prices above, memory sizes, Arm, and that a local handler\'s duration equals Lambda\'s. The last one overstates duration, because DynamoDB Local is slower than DynamoDB and this machine has 2 cores shared with it. Messages are under 32 KB, so each counts once. DynamoDB Streams reads by the fan-out trigger are free. Connection minutes, storage, data transfer and CloudFront are not per-event, so they are left out (see standing costs).',
    '',
  );

  // Latency.
  const latencyRow = (name: string, dist: Distribution) => [name, String(dist.count), ms(dist.p50), ms(dist.p95), ms(dist.p99), ms(dist.max), ms(dist.mean)];
  push(
    '## Latency (local stack)',
    '',
    `POST → delivery: ${delivery.websocket.count} events POSTed one every ${delivery.paceMs} ms (after 20 warm-up events) to a session with one WebSocket subscriber and one SSE stream. Each is timed from the start of its POST to the consumer receiving it. Command round trip: a \`both\` connection sends \`control.pause\`/\`control.resume\` to the simulated agent (\`local/agent/simulated-agent.ts\`), one at a time, and waits to see the agent's \`control.accepted\` through its own session subscription (10 warm-up commands not counted).`,
    '',
    table(['path', 'samples', 'p50', 'p95', 'p99', 'max', 'mean'], [latencyRow('POST → WebSocket', delivery.websocket), latencyRow('POST → SSE', delivery.sse), latencyRow('command round trip', command)]),
    '',
    '![Latency distributions](bench/latency.svg)',
    '',
    `On this stack, latency is mostly polling: the stream poller reads the events table's stream every ${run.settings.AEP_LOCAL_POLL_MS} ms, and an SSE stream reads its inbox every ${run.settings.AEP_SSE_POLL_MS} ms. On AWS, Lambda polls a stream shard about 4 times a second and every hop crosses a network, so expect more. These figures compare builds; they do not predict production.`,
    '',
  );

  // CPU.
  const cpu = results.cpu;
  push(
    '## Handler CPU per event (in-process)',
    '',
    `Over the official golden corpus (\`${cpu.corpus}\`, ${cpu.corpusEvents} events, ${grouped(cpu.eventsProcessed)} processed in the whole-pipeline run) with the protocol functions the handlers call: \`JSON.parse\` + \`validateEnvelope\`; ${cpu.filters} filters compiled with \`compileFilter\` (25 session, 25 type patterns, 20 severity bands, 15 agent inclusions, 15 combinations including match-all); and \`deliveryText\` (down-level + serialize when the capture ceiling is below the event's level) for every match. Capture ceilings: ${Object.entries(cpu.ceilings).map(([ceiling, count]) => `${count} ${ceiling}`).join(', ')}.`,
    '',
    table(
      ['stage', 'µs per event'],
      [
        ['parse + envelope validation', fixed(cpu.usPerEvent.parseAndValidate, 2)],
        [`match against ${cpu.filters} filters`, fixed(cpu.usPerEvent.match100, 2)],
        [`delivery text for ${fixed(cpu.matchesPerEvent, 1)} matches (${fixed(cpu.downlevelsPerEvent, 1)} down-leveled)`, fixed(cpu.usPerEvent.deliveryText, 2)],
        ['**whole pipeline**', `**${fixed(cpu.usPerEvent.pipeline, 2)}**`],
      ],
    ),
    '',
    'Stages are timed separately, so their sum need not equal the pipeline figure. Handler CPU is small next to the DynamoDB and API Gateway round trips the handlers wait on.',
    '',
    ...(cpu.repeats === undefined
      ? []
      : [
          `How it was taken: first thing in the run, before the stack starts (no DynamoDB Local, no handlers), ${cpu.repeats.pipelineUsPerEvent.length} repeats of every stage; the table is the median repeat. Whole-pipeline µs per event of each repeat: ${cpu.repeats.pipelineUsPerEvent.map((value) => fixed(value, 1)).join(', ')} (spread ${fixed(Math.min(...cpu.repeats.pipelineUsPerEvent), 1)}–${fixed(Math.max(...cpu.repeats.pipelineUsPerEvent), 1)}); the machine's 1-minute load average before each: ${cpu.repeats.loadAverage.map((value) => fixed(value, 2)).join(', ')}. The 2 cores are shared with other work, so a load above about 1 means the figure is slower than the code.`,
          '',
        ]),
  );

  push(...renderScaleMarkdown(results.fanoutScale ?? [], results.pausedConsumer));

  if (results.history !== undefined) push(...historyMarkdown(results.history));

  push('## Settings of this run', '', table(['setting', 'value'], Object.entries(run.settings).map(([key, value]) => [`\`${key}\``, String(value)])), '');
  if (results.bridges !== undefined) push(...bridgeCostLines(results.bridges));
  return `${lines.join('\n')}\n`;
}
