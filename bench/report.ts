/** The one report renderer: BENCHMARKS.md from bench/results.json; each timed figure a ratio to a named yardstick of the same run. */
import { FUNCTION_NAMES, type StackUsage } from '../local/usage.ts';
import { AWS_DYNAMO_CALL_MS, AWS_POST_MS, billedReadUnits, billedWriteUnits, dollarsPerMillion, type DurationModelInputs, MEMORY_MB, PRICE_TABLE_DATE, PRICES } from './pricing.ts';
import { type Distribution, mean, median, sum } from './stats.ts';
import type { BridgeCostRun } from './stages/bridges.ts';
import { type CostRun, INGEST_LABELS, type IngestPath, type SweepRun } from './stages/cost.ts';
import type { CpuResult } from './stages/cpu.ts';
import type { FreshSessionResult } from './stages/fresh-session.ts';
import type { HistoryBench } from './stages/history.ts';
import { ASSUMED_BATCH_FIXED_MS, lanesModel, type LanesRun, type LanesStageResult, MAX_RECORDS_PER_BATCH, postingBound, TARGET } from './stages/lanes.ts';
import type { DeliveryLatency } from './stages/latency.ts';
import type { ReconnectingConsumerResult } from './stages/reconnect.ts';
import { DEPLOYED_STREAM, type SseStreamHour } from './stages/sse-hour-model.ts';
import type { OverloadResult } from './stages/overload.ts';

export interface BenchResults {
  run: { date: string; commit: string; dirty: boolean; machine: string; runtimeSeconds: number; settings: Record<string, string | number> };
  costGrid: CostRun[];
  sweeps: SweepRun[];
  standing: { seconds: number; usage: StackUsage };
  latency: { delivery: DeliveryLatency; command: Distribution };
  cpu: CpuResult;
  sseHour: SseStreamHour;
  history: HistoryBench;
  reconnect: ReconnectingConsumerResult;
  fresh: FreshSessionResult;
  bridges: BridgeCostRun[];
  /** Absent until the lanes stage (the last of a full run) has run. */
  lanes?: LanesStageResult;
  /** Absent until the overload stage (after the lanes) has run. */
  overload?: OverloadResult;
}

const fixed = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
const grouped = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const dollars = (value: number) => `$${value.toFixed(value >= 1 ? 2 : value >= 0.01 ? 3 : value >= 0.0001 ? 4 : 6)}`;
const ms = (value: number) => `${grouped(value)} ms`;
const times = (value: number | undefined) => `${fixed(value)}×`;

/** Markdown blocks, each followed by a blank line; an array is one block of lines. */
const blocks = (...parts: Array<string | readonly string[]>): string[] => parts.flatMap((part) => [...(typeof part === 'string' ? [part] : part), '']);

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const rule = header.map((_, index) => (index === 0 ? ':---' : '---:'));
  return [header, rule, ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

const PATHS: readonly IngestPath[] = ['single', 'batch100', 'websocket'];
const PATH_ORDER = (a: CostRun, b: CostRun) => PATHS.indexOf(a.ingest) - PATHS.indexOf(b.ingest) || a.subscribers - b.subscribers;

/** Per-1,000-event figures of one cost-grid row. */
function derive(run: CostRun, model: DurationModelInputs) {
  const { usage } = run;
  const per1000 = 1000 / run.events;
  const fn = usage.functions;
  return {
    writeUnits: billedWriteUnits(usage.dynamo) * per1000,
    readUnits: billedReadUnits(usage.dynamo) * per1000,
    fanoutReadUnits: billedReadUnits(fn.fanout) * per1000,
    dynamoCalls: usage.dynamo.calls * per1000,
    invocations: sum(FUNCTION_NAMES.map((name) => fn[name].invocations)) * per1000,
    posts: usage.postToConnection.calls * per1000,
    deliveries: run.receivedDeliveries * per1000,
    ingestWruPerEvent: (billedWriteUnits(fn.http) + billedWriteUnits(fn.socket)) / run.events,
    fanoutWruPerEvent: billedWriteUnits(fn.fanout) / run.events,
    ingestRruPerEvent: (billedReadUnits(fn.http) + billedReadUnits(fn.authorizer) + billedReadUnits(fn.socket)) / run.events,
    fanoutRruPerDelivery: run.receivedDeliveries > 0 ? billedReadUnits(fn.fanout) / run.receivedDeliveries : undefined,
    usd: dollarsPerMillion(usage, run.events, model),
  };
}

/** The duration model's fan-out CPU floor: the lanes stage's W = 1 run with the most subscribers. */
function cpuFloor(results: Pick<BenchResults, 'lanes'>): { msPerDelivery: number; run: LanesRun } | undefined {
  const run = (results.lanes?.runs ?? []).filter((one) => one.workers === 1 && one.deliveries > 0).sort((a, b) => b.subscribers - a.subscribers)[0];
  return run === undefined ? undefined : { msPerDelivery: run.cpuMs / run.deliveries, run };
}

export function renderMarkdown(results: BenchResults): string {
  const { run } = results;
  const floor = cpuFloor(results);
  const model: DurationModelInputs = { concurrency: results.lanes?.settings.concurrency ?? 256, cpuMsPerDelivery: floor?.msPerDelivery ?? 0 };
  const grid = [...results.costGrid].sort(PATH_ORDER).map((row) => ({ row, figures: derive(row, model) }));
  const counts = [...new Set(grid.map(({ row }) => row.subscribers))].sort((a, b) => a - b);
  const maxCount = counts.at(-1) ?? 0;
  const midCount = counts.includes(10) ? 10 : maxCount;
  const find = (path: IngestPath, subscribers: number) => grid.find(({ row }) => row.ingest === path && row.subscribers === subscribers)?.figures;
  const referenceUs = results.cpu.usPerEvent.reference;
  const lines: string[] = [];
  const push = (...text: string[]) => lines.push(...text);

  push(...blocks(
    '# Benchmarks',
    'Generated by `npm run bench` (`bench/run.ts`); do not edit by hand. Results: [bench/results.json](bench/results.json).',
    [`- **Date:** ${run.date}; **commit** \`${run.commit}\`${run.dirty ? ' (dirty: uncommitted changes)' : ''}`,
    `- **Machine:** ${run.machine}`,
    `- **Run time:** ${Math.round(run.runtimeSeconds / 60)} min (the lanes stage apart)`],
    '## How to read this',
    ['- Every figure comes from the real handlers in-process against DynamoDB Local and the local API Gateway (`local/stack.ts`). Nothing here ran on AWS.',
    '- **Counts** (request units, invocations, posts, deliveries) are as DynamoDB and the local gateway report them, per 1,000 ingested events.',
    '  Reads that found nothing and refused conditional writes are counted at the least DynamoDB bills (`src/store/dynamo-client.ts`).',
    '- **Timed figures** are ratios to a yardstick of the same run, named beside each: the stream poll periods (latency),',
    '  the reference pipeline, a fixed JSON parse, walk and serialize of the golden corpus (CPU), one delivering process (lanes).',
    "  This machine's milliseconds stand beside, for this machine only. A single sample (a maximum, a first delivery) has no ratio.",
    '- **Noisy** marks a ratio that moves by more than about 15% from one run to the next on this shared 2-core machine:',
    '  read it as an order of magnitude, not as a change between builds. The bench takes each figure once; it does not repeat stages to make runs agree.',
    '- **Modelled:** Lambda duration (see the dollar estimate). **Assumed:** memory sizes, Arm, list prices.'],
    '## Headline figures',
    [table(['', ...PATHS.map((path) => INGEST_LABELS[path])], [
      ['**Write units per ingested event**', ...PATHS.map((path) => `**${fixed(mean(grid.filter(({ row }) => row.ingest === path).map(({ figures }) => figures.ingestWruPerEvent)))}**`)],
      [`**Ingest read units per event**, ${midCount} subscribers`, ...PATHS.map((path) => `**${fixed(find(path, midCount)?.ingestRruPerEvent)}**`)],
      [`**Fan-out read units per delivery**, ${midCount} / ${maxCount} subscribers`, ...PATHS.map((path) => `${fixed(find(path, midCount)?.fanoutRruPerDelivery, 3)} / ${fixed(find(path, maxCount)?.fanoutRruPerDelivery, 3)}`)],
      ...[...new Set([0, midCount, maxCount])].map((count) => [`**$ per million events**, ${count} subscribers`, ...PATHS.map((path) => { const f = find(path, count); return f === undefined ? '–' : `**${dollars(f.usd.total)}**`; })]),
      [`$ per million deliveries, ${maxCount} subscribers`, ...PATHS.map((path) => { const f = find(path, maxCount); return f === undefined || f.deliveries === 0 ? '–' : dollars((f.usd.total * 1000) / f.deliveries); })],
    ])],
    [`- **Latency, in poll periods of the same run** (p99 noisy): ${latencyPaths(results).map(([label, poll, dist]) => `${label} p50/p99 **${times(dist.p50 / poll)} / ${times(dist.p99 / poll)}**`).join('; ')}.`,
    `- **Handler CPU:** ${times(results.cpu.ratio.pipeline)} the reference pipeline (this machine: ${fixed(results.cpu.usPerEvent.pipeline, 1)} µs per event).`,
    `- **An SSE stream held open an hour:** ${dollars(results.sseHour.hour.usd.total)} at ${results.sseHour.setMb} MB; an idle WebSocket ${dollars(results.sseHour.websocketIdleHourUsd)}.`],
  ));

  // Cost grid.
  push(...blocks(
    '## Cost per 1,000 ingested events',
    [`Each row ingests ${run.settings['events per cost scenario']} events into one session, with ${counts.join(', ')} WebSocket subscribers:`,
    "half session-filtered (one on the events' session, the rest on sessions that never receive one), half type-filtered (`tool.*`, `progress.*` match half the events each; the other patterns none).",
    'Opening the subscribers is setup, measured apart. Units are as billed.'],
    [table(
      ['ingest', 'subscribers', 'write units', 'read units', 'of which fan-out', 'DynamoDB calls', 'invocations', 'posts', 'deliveries', 'ingest WRU / event', 'fan-out WRU / event', 'ingest RRU / event', 'fan-out RRU / delivery'],
      grid.map(({ row, figures: f }) => [INGEST_LABELS[row.ingest], String(row.subscribers), grouped(f.writeUnits, 1), grouped(f.readUnits, 1), grouped(f.fanoutReadUnits, 1), grouped(f.dynamoCalls), grouped(f.invocations), grouped(f.posts), grouped(f.deliveries), fixed(f.ingestWruPerEvent), fixed(f.fanoutWruPerEvent), fixed(f.ingestRruPerEvent), fixed(f.fanoutRruPerDelivery, 3)]),
    )],
    ['An event is one conditional `PutItem` (1 WRU up to 1 KB); every HTTP request reads its token (1 RRU, so batching amortises it); every WebSocket message reads its connection record.',
    'Fan-out writes session summaries and order states per batch, and queries one partition per batch for the unconstrained subscriptions, one per session and one per first type segment in the batch.'],
  ));

  // Sweeps.
  const perBatch = (sweep: SweepRun) => (sweep.usage.functions.fanout.invocations > 0 ? billedReadUnits(sweep.usage.functions.fanout) / sweep.usage.functions.fanout.invocations : 0);
  const sweepCounts = [...new Set(results.sweeps.map((sweep) => sweep.unmatched))].sort((a, b) => a - b);
  const sweepOf = (kind: SweepRun['kind'], unmatched: number) => results.sweeps.find((sweep) => sweep.kind === kind && sweep.unmatched === unmatched);
  push(...blocks(
    '## Fan-out reads and subscriptions that cannot match',
    ["One subscriber on the events' session plus N subscriptions that can never match: session-filtered on other sessions, or type-filtered on `attention.*`.",
    'They are recorded with the relay\'s own `recordSubscription` on connection records without a socket. Fan-out read units per stream batch:'],
    table(['cannot match', 'session-filtered: RRU / batch', 'type-filtered: RRU / batch'], sweepCounts.map((count) => [grouped(count), fixed(sweepOf('session-unmatched', count) && perBatch(sweepOf('session-unmatched', count) as SweepRun)), fixed(sweepOf('type-unmatched', count) && perBatch(sweepOf('type-unmatched', count) as SweepRun))])),
    'Subscriptions on other sessions, and on type segments a batch does not carry, are never read.',
  ));

  push(...standingAndStreamHour(results), ...dollarSection(grid.map(({ row, figures }) => ({ row, usd: figures.usd })), model, floor, referenceUs));
  push(...latencySection(results), ...cpuSection(results.cpu), ...lanesSection(results, referenceUs), ...historySection(results.history));
  push(...freshSection(results.fresh), ...reconnectSection(results.reconnect), ...bridgesSection(results.bridges), ...overloadSection(results.overload));
  push(...blocks(
    '## Settings of this run',
    table(['setting', 'value'], Object.entries(run.settings).map(([key, value]) => [`\`${key}\``, String(value)])),
  ));
  return `${lines.join('\n')}\n`;
}

/** Each latency path with its yardstick: the stream poll, and for SSE the stream poll + the inbox poll. */
function latencyPaths(results: BenchResults): Array<[string, number, Distribution]> {
  const poll = Number(results.run.settings.AEP_LOCAL_POLL_MS);
  return [['POST → WebSocket', poll, results.latency.delivery.websocket], ['POST → SSE', poll + Number(results.run.settings.AEP_SSE_POLL_MS), results.latency.delivery.sse], ['command round trip', poll, results.latency.command]];
}

function latencySection(results: BenchResults): string[] {
  const { settings } = results.run;
  return blocks(
    '## Latency (local stack)',
    [`POST → delivery: ${results.latency.delivery.websocket.count} events POSTed at random (Poisson arrivals, one every ${results.latency.delivery.paceMs} ms on average) to a session with one WebSocket subscriber,`,
    "then as many to a session with 5 SSE streams opened a few tens of milliseconds apart (their deliveries pooled), each binding alone on the stack.",
    'Command round trip: `control.pause`/`control.resume` to the simulated agent, one at a time, until its `control.accepted` comes back.',
    `Locally, latency is mostly polling, so the yardstick is the polls each path waits on: the stream poll (\`AEP_LOCAL_POLL_MS\` = ${settings.AEP_LOCAL_POLL_MS} ms),`,
    `and for SSE the stream poll + the inbox poll (\`AEP_SSE_POLL_MS\` = ${settings.AEP_SSE_POLL_MS} ms). The p99 is **noisy**: a stall of the shared machine moves it by a third.`],
    table(['path', 'samples', 'yardstick', '**p50 ÷ poll**', '**p95 ÷ poll**', 'p99 ÷ poll (noisy)', 'this machine: p50 / p99 / max'], latencyPaths(results).map(([label, poll, dist]) =>
      [label, String(dist.count), ms(poll), `**${times(dist.p50 / poll)}**`, `**${times(dist.p95 / poll)}**`, times(dist.p99 / poll), `${ms(dist.p50)} / ${ms(dist.p99)} / ${ms(dist.max)}`])),
    'On AWS, Lambda polls a stream shard about 4 times a second and every hop crosses a network: these figures compare builds; they do not predict production.',
  );
}

function cpuSection(cpu: CpuResult): string[] {
  const row = (label: string, key: keyof CpuResult['ratio']) => [label, key === 'pipeline' ? `**${times(cpu.ratio[key])}**` : `${times(cpu.ratio[key])} (noisy)`, fixed(cpu.usPerEvent[key], 2)];
  return blocks(
    '## Handler CPU per event (in-process)',
    [`Over the golden corpus (${cpu.corpusEvents} events) with the functions the handlers call: \`JSON.parse\` + \`validateEnvelope\`; ${cpu.filters} compiled filters;`,
    `and \`deliveryText\` for every match (${fixed(cpu.matchesPerEvent, 1)} a event, ${fixed(cpu.downlevelsPerEvent, 1)} down-leveled).`,
    'Each is timed once beside the yardstick, the reference pipeline (`bench/stages/cpu.ts`: JSON parse, walk and serialize of the same corpus).',
    "The stages' own ratios are **noisy**: a process settles into one of a few compiled forms of the matchers, and the match ratio moved by a fifth between processes."],
    [table(['stage', '÷ reference (same run)', 'this machine: µs per event'], [
      row('parse + envelope validation', 'parseAndValidate'),
      row(`match against ${cpu.filters} filters`, 'match100'),
      row('delivery text', 'deliveryText'),
      row('**whole pipeline**', 'pipeline'),
      ['reference pipeline (the yardstick)', '1×', fixed(cpu.usPerEvent.reference, 2)],
    ])],
  );
}

function standingAndStreamHour(results: BenchResults): string[] {
  const hour = results.sseHour;
  const row = hour.hour;
  const s = { ...DEPLOYED_STREAM, idleSeconds: 0, burstEvents: 0, streamsPerHour: 12, ...hour.settings };
  const setup = results.costGrid.find((one) => one.ingest === 'single' && one.subscribers > 0 && one.subscribers === Math.max(...results.costGrid.map((r) => r.subscribers)));
  const n = setup?.subscribers ?? 0;
  // An abandoned stream (a closed tab) polls on unaware until its idle end: its setup and cleanup, and the idle loop for that long.
  const abandonedUsd = (row.usd.total - row.usd.lambdaRequests) * (s.idleEndMs / 3_600_000) + row.usd.lambdaRequests / s.streamsPerHour;
  return blocks(
    '## Setup and standing costs',
    [...(setup === undefined ? [] : [
      `Opening one subscriber (connect with the authorizer, hello, subscribe), averaged over ${n}: ${fixed(setup.setup.dynamo.writeUnits / n)} write units, ${fixed(setup.setup.dynamo.readUnits / n)} read units,`,
      `${fixed(setup.setup.functions.authorizer.invocations / n)} authorizer and ${fixed(setup.setup.functions.socket.invocations / n)} socket invocations.`,
      '',
    ]),
    `An idle WebSocket subscriber made ${results.standing.usage.functions.socket.dynamoCalls} DynamoDB calls in ${results.standing.seconds} s: it costs only connection minutes, ${dollars(hour.websocketIdleHourUsd)} an hour.`,
    'An SSE stream is a running function that reads its inbox, so it costs duration and reads while open: the SSE stream-hour.'],
    '## SSE stream-hour',
    ['One stream served by the bundled stream handler alone in a process (as one Lambda execution environment serves it), at the deployed stream settings:',
    `inbox poll every ${s.pollMs} ms, backing off after ${s.backoffAfterPolls} empty reads to every ${grouped(s.idlePollMs)} ms; heartbeat every ${s.heartbeatMs / 1000} s; token re-check every ${s.revalidateMs / 1000} s;`,
    `slot lease ${s.slotLeaseMs / 1000} s (pool ${s.maxLiveStreams}, a tenant's share ${s.maxStreamsPerTenant}); idle end ${s.idleEndMs / 60_000} min, so ${s.streamsPerHour} streams an idle hour.`,
    `Idle ${s.idleSeconds} s, then ${s.burstEvents} deliveries, then its client leaves; the idle phase is scaled to an hour.`],
    [table(['one stream held open an hour', 'memory', 'read units', 'write units', 'Lambda duration', 'Lambda requests', 'DynamoDB', 'total'], [
      ['SSE stream', `${row.memoryMb} MB`, grouped(row.readUnits), grouped(row.writeUnits), dollars(row.usd.lambdaDuration), dollars(row.usd.lambdaRequests), dollars(row.usd.dynamoReads + row.usd.dynamoWrites), `**${dollars(row.usd.total)}**`],
      ['WebSocket, idle', '', '0', '0', '', '', '', `**${dollars(hour.websocketIdleHourUsd)}** (connection minutes)`],
    ])],
    table(['idle-phase call', 'calls per hour', 'units per hour'], row.byCommand.map((call) => [call.call, grouped(call.callsPerHour), grouped(call.unitsPerHour)])),
    [`- **Memory, measured:** peak RSS ${fixed(hour.peakRssMb, 1)} MB up to the burst's last delivery; sized at ${hour.sizedMb} MB (the peak and half again, 64 MB steps); the stack sets ${hour.setMb} MB.`,
    `- **CPU per delivery** (**noisy**): ${times(hour.cpuRatioToReference)} the reference pipeline's CPU per event over the same events in the same process;`,
    `  the burst's CPU, its reads included, ÷ its deliveries; this machine: ${fixed(hour.cpuMsPerDelivery, 3)} ms per delivery.`,
    `- **An abandoned stream** (a closed tab; Lambda is not told the client left) runs on to its idle end: about ${dollars(abandonedUsd)} each.`,
    `- Setup and cleanup per stream: ${fixed(row.setupAndCleanup.readUnits, 1)} RRU, ${fixed(row.setupAndCleanup.writeUnits, 1)} WRU; heartbeats cost no call (${grouped(row.heartbeatsPerHour)} an hour).`],
  );
}

function dollarSection(rows: Array<{ row: CostRun; usd: ReturnType<typeof dollarsPerMillion> }>, model: DurationModelInputs, floor: ReturnType<typeof cpuFloor>, referenceUs: number): string[] {
  const floorText = floor === undefined
    ? 'not measured in these results (no lanes stage), so 0.'
    : `${times((floor.msPerDelivery * 1000) / referenceUs)} the reference pipeline's CPU per event (noisy; this machine: ${fixed(floor.msPerDelivery * 1000, 1)} µs), from the lanes stage's W = 1 burst at ${grouped(floor.run.subscribers)} subscribers; that process also runs ingest and the pollers, so it is an upper bound.`;
  return blocks(
    '## Dollar estimate per million events',
    `List prices, US East (N. Virginia), compiled ${PRICE_TABLE_DATE}; free and volume tiers ignored. Check the pages before relying on them.`,
    table(['item', 'USD', 'per', 'source'], Object.values(PRICES).map((price) => [price.item, String(price.usd), price.per, price.source])),
    [`Memory: ${Object.entries(MEMORY_MB).map(([name, mb]) => `${name} ${mb} MB`).join(', ')}, on Arm. Lambda duration is **modelled**, not the local wall time:`,
    `fan-out = its DynamoDB calls at ${AWS_DYNAMO_CALL_MS} ms each + its posts ${model.concurrency} in flight at ${AWS_POST_MS} ms, never less than its CPU per delivery × its posts;`,
    `every other function = its DynamoDB calls at ${AWS_DYNAMO_CALL_MS} ms + 1 ms, never more than its local wall time. Fan-out's CPU per delivery: ${floorText}`],
    [table(['ingest', 'subscribers', 'DynamoDB writes', 'DynamoDB reads', 'Lambda requests', 'Lambda duration', 'WebSocket messages', 'HTTP requests', 'total'], rows.map(({ row, usd }) => [
      INGEST_LABELS[row.ingest], String(row.subscribers), dollars(usd.dynamoWrites), dollars(usd.dynamoReads), dollars(usd.lambdaRequests), dollars(usd.lambdaDuration), dollars(usd.websocketMessages), dollars(usd.httpRequests), `**${dollars(usd.total)}**`,
    ]))],
    'Each delivery is one WebSocket message, so the bill follows deliveries. Connection minutes, storage and data transfer are not per event (see standing costs).',
  );
}

function lanesSection(results: BenchResults, referenceUs: number): string[] {
  const lanes = results.lanes;
  if (lanes === undefined || lanes.runs.length === 0) return ['## Fan-out lanes', '', 'Not measured in these results (`npm run bench -- --only lanes`).', ''];
  const { settings, runs } = lanes;
  const one = (run: LanesRun) => runs.find((other) => other.workers === 1 && other.subscribers === run.subscribers);
  const ratio = (run: LanesRun, figure: (r: LanesRun) => number) => { const base = one(run); return base === undefined ? undefined : figure(run) / figure(base); };
  const perCpuSecond = (run: LanesRun) => run.deliveries / (run.cpuMs / 1000);
  const cpu = cpuFloor(results);
  const model = (postMs: number) => lanesModel({ subscribers: TARGET.subscribers, eventsPerSecond: TARGET.eventsPerSecond, postMs, postsPerLane: settings.concurrency, laneMemoryMb: MEMORY_MB.fanoutlane, cpuMsPerDelivery: cpu?.msPerDelivery ?? 0, batchFixedMs: ASSUMED_BATCH_FIXED_MS });
  const columns = [20, 10].map((postMs) => model(postMs));
  const modelRow = (label: string, value: (m: ReturnType<typeof lanesModel>) => string) => [label, ...columns.map(value)];
  const unbounded = (value: number) => (Number.isFinite(value) ? ms(value) : 'unbounded');
  return blocks(
    '## Fan-out lanes',
    [`One tenant's session with S subscribers, a burst POSTed at once (${grouped(settings.deliveriesPerRun)} deliveries at every S), delivered by W processes:`,
    `W = 1 is the fan-out invocation alone, W = 2 and 4 add lane worker processes. Posts go to a stand-in with a ${settings.postMs} ms round trip; ${settings.concurrency} in flight per lane.`,
    'The yardstick is **W = 1 at the same S in the same run**. The rate and CPU ratios are **noisy** (one burst each: 15–30% between runs).',
    'The posting bound: each of the W processes keeps its posts in flight from the first delivery on, no connection faster than its own posts one after another.'],
    [table(['subscribers', 'W', 'events', 'deliveries', '**deliveries / s ÷ W = 1**', 'of the posting bound', 'p50 / p99 ÷ W = 1', 'deliveries per CPU-s ÷ W = 1', 'fan-out / lane invocations', 'this machine: deliveries / s, first delivery'], runs.map((run) => [
      grouped(run.subscribers), String(run.workers), String(run.events), `${grouped(run.deliveries)} / ${grouped(run.expectedDeliveries)}`,
      `**${times(ratio(run, (r) => r.deliveriesPerSecond))}**`, `${fixed((100 * run.deliveriesPerSecond) / postingBound(run, settings), 0)}%`,
      `${times(ratio(run, (r) => r.latency.p50))} / ${times(ratio(run, (r) => r.latency.p99))}`, times(ratio(run, perCpuSecond)),
      `${run.fanoutInvocations} / ${run.laneInvocations}${run.laneFailures > 0 ? ` (${run.laneFailures} failed)` : ''}`, `${grouped(run.deliveriesPerSecond)}, ${ms(run.firstDeliveryMs)}`,
    ]))],
    `### The AWS model: ${grouped(TARGET.subscribers)} subscribers, ${TARGET.eventsPerSecond} events/s`,
    [`From the CPU per delivery above (${cpu === undefined ? 'not measured' : `${times((cpu.msPerDelivery * 1000) / referenceUs)} the reference pipeline's CPU per event, this machine's ${fixed(cpu.msPerDelivery * 1000, 1)} µs`}),`,
    `the lane function at ${MEMORY_MB.fanoutlane} MB (one vCPU at 1,769 MB), and F = ${ASSUMED_BATCH_FIXED_MS} ms per batch that is not posting (assumed). Each connection takes one post at a time (its order).`],
    [table(['', 'post latency 20 ms', 'post latency 10 ms'], [
      modelRow('deliveries / s', (m) => grouped(m.deliveriesPerSecond)),
      modelRow('each connection busy', (m) => `${fixed(100 * m.connectionBusy, 0)}%`),
      modelRow('rate per lane (posts-bound / CPU-bound)', (m) => `${grouped(m.latencyBoundPerLane)} / ${Number.isFinite(m.cpuBoundPerLane) ? grouped(m.cpuBoundPerLane) : '–'}`),
      modelRow('**lanes**, each half busy', (m) => `**${m.lanes}**`),
      modelRow(`records per batch (at most ${MAX_RECORDS_PER_BATCH})`, (m) => fixed(m.recordsPerBatch, 0)),
      modelRow('**delivery p99** (≈ 2 × the batch)', (m) => `**${m.sustainable ? unbounded(m.p99Ms) : 'unbounded'}**`),
      modelRow('**$ per million deliveries** (lane duration, lane requests, WebSocket messages)', (m) => `**${dollars(m.dollarsPerMillion.total)}**`),
      modelRow('`@connections` requests / s (× the default account quota of 10,000)', (m) => `${grouped(m.apiGatewayRps)} (${fixed(m.apiGatewayQuotaMultiple, 0)}×)`),
    ])],
    columns[0]?.sustainable === true ? '' : `At a 20 ms post no number of lanes keeps up: each connection would need a post in flight ${fixed(100 * (columns[0]?.connectionBusy ?? 0), 0)}% of the time.`,
  );
}

function historySection(history: HistoryBench): string[] {
  return blocks(
    '## History reads',
    `One session of ${history.sessionEvents} events read whole through \`GET /history\`, following \`Link: rel="next"\`; then one \`GET /sessions\` page over ${history.sessionsListed} sessions. Read units include each request's token lookup.`,
    table(['page size', 'requests', 'RRU per 1,000 events', 'RRU per request'], history.pages.map((page) => [String(page.pageSize), String(page.requests), fixed(page.readUnitsPer1000, 1), fixed(page.readUnitsPerRequest, 1)])),
    [`- \`GET /sessions\` (${history.sessionsPage.pageSize} per page): **${fixed(history.sessionsPage.readUnitsPerPage, 1)} RRU per page**.`,
    `- Session summaries: **${fixed(history.summaryWriteUnitsPerEvent, 3)} WRU per ingested event**, written by fan-out (${history.summarySessionsPerBatch}).`],
  );
}

function freshSection(result: FreshSessionResult): string[] {
  const polls = (value: number) => fixed(value / result.pollMs, 1);
  return blocks(
    '## A fresh session beside a warm one',
    [`A consumer subscribes to a session that does not exist yet; an emitter with a new agent name says hello and pipelines ${result.events} events over one socket, then ${result.events} more once the session is warm.`,
    `First delivery from the burst's first frame, in stream polls of ${result.pollMs} ms (the yardstick); write units per event over every function, refused conditional writes included.`,
    'An event the relay refuses as `unavailable` (its store timed out on a loaded machine) is sent again with the same id, as a client does. The absolute figures move by several polls between runs; the fresh-to-warm difference within a run is the figure.'],
    table(['round', 'fresh: first (polls)', 'warm: first (polls)', 'fresh WRU / event', 'warm WRU / event'], result.rounds.map((round, index) => [String(index + 1), polls(round.fresh.firstMs), polls(round.warm.firstMs), fixed(round.fresh.writeUnitsPerEvent), fixed(round.warm.writeUnitsPerEvent)])),
    [`Median first delivery: **fresh ${fixed(result.freshFirstPolls, 1)} polls, warm ${fixed(result.warmFirstPolls, 1)} polls**;`,
    `median write units per event: fresh ${fixed(median(result.rounds.map((round) => round.fresh.writeUnitsPerEvent)))}, warm ${fixed(median(result.rounds.map((round) => round.warm.writeUnitsPerEvent)))}.`],
  );
}

function reconnectSection(result: ReconnectingConsumerResult): string[] {
  return blocks(
    '## Reconnecting consumer (session order)',
    ["An emitter pipelines a session's events over one socket (invocation jitter on, so they are stored out of order); a consumer drops after every 5 to 40 events and resumes after the last position it received.",
    "Late entries: events released after their session's release point passed them. Duplicates: deliveries of an event the consumer already had. Counts only."],
    table(['round', 'events', 'connections', 'late entries', 'duplicates', 'all received'], result.rounds.map((round, index) => [String(index + 1), String(round.events), String(round.connections), String(round.lateEntries), String(round.duplicates), round.complete ? 'yes' : 'no'])),
    `**${fixed(result.lateEntriesPerThousand, 1)} late entries per 1,000 events; ${fixed(result.duplicatesPerEvent, 3)} duplicate deliveries per delivered event.**`,
  );
}

function bridgesSection(runs: readonly BridgeCostRun[]): string[] {
  const per1000 = (value: number, events: number) => fixed((value * 1000) / events, 1);
  return blocks(
    '## Bridges (AEP-0005 sinks)',
    [`The same ${runs[0]?.events ?? 0} events posted to tenants with no sinks, one sink of each HTTP kind, and all three, each sink a local receiver. Per 1,000 events, all added cost:`,
    "ingest and fan-out do not change with sinks. The bridges function reads a tenant's sink settings once per stream batch."],
    table(['sinks', 'bridges invocations', 'bridges RRU', 'bridges WRU', 'sink requests'], runs.map((run) => [run.scenario, per1000(run.bridges.invocations, run.events), per1000(run.bridges.readUnits, run.events), per1000(run.bridges.writeUnits, run.events), per1000(run.sinkRequests, run.events)])),
  );
}

function overloadSection(result: OverloadResult | undefined): string[] {
  if (result === undefined) return [];
  const { flood, canary } = result;
  const refused = Object.entries(flood.refused).map(([code, count]) => `${grouped(count)} ${code}`).join(', ') || 'none';
  return [
    '## Overload, with `npm start`\'s defaults',
    '',
    `Tenant A floods: ${flood.sockets} sockets each pipelining ${grouped(flood.framesSent / flood.sockets)} events without waiting (${grouped(flood.framesSent)} frames), ${flood.consumers} live consumers of its own;`,
    `tenant B's canary POSTs ${canary.events} events 100 ms apart to a WebSocket consumer, first alone, then beside the flood. Each tenant may admit ${result.eventsPerSecondPerTenant} events a second.`,
    '',
    table(['', 'B alone', 'B beside the flood'], [
      ['live p50', ms(canary.alone.p50), ms(canary.beside.p50)],
      ['live p99', ms(canary.alone.p99), ms(canary.beside.p99)],
    ]),
    '',
    `B beside the flood: p50 ${times(canary.beside.p50 / canary.alone.p50)} B alone, p99 ${times(canary.beside.p99 / canary.alone.p99)} (yardstick: B alone, same run; noisy, it measures one DynamoDB Local's queue as much as the relay).`,
    `Counted: B's events lost beside the flood **${canary.lostBeside}**; A's frames refused in-band: ${refused}; upgrades answered 5xx: **${flood.upgrades5xx}**;`,
    `duplicates per delivered event over every consumer: **${fixed(result.duplicates / Math.max(1, result.delivered), 4)}** (${grouped(result.duplicates)} of ${grouped(result.delivered)}).`,
    '',
  ];
}
