/** The shapes of the bench results, and the figures derived from one measured run (per 1,000 events, dollars). */
import type { FreshSessionResult } from './fresh-session.ts';
import type { ReconnectingConsumerResult } from './reconnecting-consumer.ts';
import type { StackUsage } from '../local/usage.ts';
import { FUNCTION_NAMES } from '../local/usage.ts';
import type { CpuResult } from './cpu.ts';
import type { LanesStageResult } from './fanout-lanes.ts';
import type { CostRun, IngestPath, SweepRun } from './cost.ts';
import type { DeliveryLatency, Distribution } from './latency.ts';
import type { FanoutScaleRun } from './fanout-scale.ts';
import { cpuStandInRatio } from './fanout-scale.ts';
import type { HistoryBench } from './history.ts';
import type { PausedConsumerResult } from './paused-consumer.ts';
import type { BridgeCostRun } from './bridges.ts';
import { PRICES } from './prices.ts';
import { billedReadUnits, billedWriteUnits } from './billed-units.ts';
import { modelledGbSeconds } from './duration-model.ts';
import type { DurationModelInputs } from './duration-model.ts';

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
  /**
   * Usage while one idle WebSocket subscriber stayed open (results saved before the SSE
   * stream-hour stage also held an idle SSE stream in it; the report no longer reads that).
   */
  usage: StackUsage;
}

export interface BenchResults {
  run: RunInfo;
  costGrid: CostRun[];
  sweeps: SweepRun[];
  standing: StandingCost;
  /** `repeats`: how many times the stage ran, each figure the median over them (absent: once). */
  latency: { delivery: DeliveryLatency; command: Distribution; repeats?: number };
  cpu: CpuResult;
  /** Absent in results from before these scenarios existed. */
  fanoutScale?: FanoutScaleRun[];
  pausedConsumer?: PausedConsumerResult;
  /** Added cost of bridge sinks (absent in results from before the bridges). */
  bridges?: BridgeCostRun[];
  /** History costs (`bench/history.ts`); absent in results saved before it existed. */
  history?: HistoryBench;
  /** The reconnecting consumer (`bench/reconnecting-consumer.ts`); absent in results saved before it existed. */
  reconnectingConsumer?: ReconnectingConsumerResult;
  freshSession?: FreshSessionResult;
  /** The fan-out lanes stage (`bench/fanout-lanes.ts`, `--only lanes`); absent in results saved before it existed. */
  fanoutLanes?: LanesStageResult;
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
  /** All per 1,000 ingested events; units as billed (empty reads and refused writes at their minimum). */
  writeUnits: number;
  readUnits: number;
  fanoutReadUnits: number;
  /** Reads that found nothing and conditional writes refused, per 1,000 events (in the units above at their minimum). */
  emptyReads: number;
  refusedWrites: number;
  /** Every DynamoDB call, refused conditional writes included. */
  dynamoCalls: number;
  invocations: Record<(typeof FUNCTION_NAMES)[number] | 'total', number>;
  posts: number;
  deliveries: number;
  /** Write units the ingest handlers (HTTP and WebSocket functions) spent per event: the durable write. */
  writeUnitsPerEvent: number;
  /** Write units fan-out spent per event (session summaries, order states, late entries), outside the ingest path. */
  fanoutWriteUnitsPerEvent: number;
  /** Read units the ingest side (HTTP, authorizer and socket functions) spent per ingested event: token lookups, connection records. */
  ingestReadUnitsPerEvent: number;
  /** Read units fan-out spent per delivery (subscription queries, order states), empty queries at their billed minimum. */
  fanoutReadUnitsPerDelivery: number | undefined;
  recordsPerFanoutBatch: number;
  dollarsPerMillion: DollarBreakdown;
}

export const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0);

/**
 * The duration model's CPU floor: the fan-out scale run with the least CPU per delivery (this
 * machine's CPU-ms), and that run's ratio to the stand-in post loop's CPU per delivery (same
 * pair) when its results carry it. Undefined without a fan-out scale stage.
 */
export function cpuFloor(results: Pick<BenchResults, 'fanoutScale'>): { msPerDelivery: number; standInRatio?: number; standInMsPerDelivery?: number; run: FanoutScaleRun } | undefined {
  const measured = (results.fanoutScale ?? []).filter((run) => run.processCpuMs !== undefined && run.deliveries > 0);
  const perDelivery = (run: FanoutScaleRun) => (run.processCpuMs as number) / run.deliveries;
  const run = [...measured].sort((a, b) => perDelivery(a) - perDelivery(b))[0];
  if (run === undefined) return undefined;
  const msPerDelivery = perDelivery(run);
  const standIn = run.standInCpuMsPerDelivery;
  // The ratio as the row states it (each pair's own, combined: fanout-scale.ts).
  const ratio = cpuStandInRatio(run);
  return standIn === undefined || standIn <= 0 || ratio === undefined ? { msPerDelivery, run } : { msPerDelivery, standInRatio: ratio, standInMsPerDelivery: standIn, run };
}

/** What the duration model needs beyond the counts; without a fan-out scale stage, CPU per delivery is unmeasured (0). */
export function durationInputs(results: Pick<BenchResults, 'fanoutScale'>, concurrency: number): DurationModelInputs {
  return { concurrency, cpuMsPerDelivery: cpuFloor(results)?.msPerDelivery ?? 0 };
}

export function dollarsPerMillion(usage: StackUsage, events: number, model: DurationModelInputs): DollarBreakdown {
  const scale = 1_000_000 / events;
  const gbSeconds = modelledGbSeconds(usage, model);
  const delivered = usage.postToConnection.byStatus['200'] ?? 0;
  const breakdown = {
    dynamoWrites: (billedWriteUnits(usage.dynamo) * scale * PRICES.dynamoWrite.usd) / 1e6,
    dynamoReads: (billedReadUnits(usage.dynamo) * scale * PRICES.dynamoRead.usd) / 1e6,
    lambdaRequests: (sum(FUNCTION_NAMES.map((name) => usage.functions[name].invocations)) * scale * PRICES.lambdaRequest.usd) / 1e6,
    lambdaDuration: gbSeconds * scale * PRICES.lambdaArmGbSecond.usd,
    // Received: every inbound message invokes $default; sent: every delivered PostToConnection.
    websocketMessages: (((usage.socketRoutes['$default'] ?? 0) + delivered) * scale * PRICES.websocketMessage.usd) / 1e6,
    httpRequests: (usage.functions.http.invocations * scale * PRICES.httpApiRequest.usd) / 1e6,
  };
  return { ...breakdown, total: sum(Object.values(breakdown)) };
}

export function derive(run: CostRun, model: DurationModelInputs): Derived {
  const per1000 = 1000 / run.events;
  const { usage } = run;
  const invocations = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, usage.functions[name].invocations * per1000])) as Derived['invocations'];
  invocations.total = sum(FUNCTION_NAMES.map((name) => invocations[name]));
  const deliveries = run.receivedDeliveries;
  return {
    ingest: run.ingest,
    subscribers: run.subscribers,
    writeUnits: billedWriteUnits(usage.dynamo) * per1000,
    readUnits: billedReadUnits(usage.dynamo) * per1000,
    fanoutReadUnits: billedReadUnits(usage.functions.fanout) * per1000,
    emptyReads: (usage.dynamo.emptyReads ?? 0) * per1000,
    refusedWrites: (usage.dynamo.refusedWrites ?? 0) * per1000,
    dynamoCalls: usage.dynamo.calls * per1000,
    invocations,
    posts: usage.postToConnection.calls * per1000,
    deliveries: deliveries * per1000,
    writeUnitsPerEvent: (billedWriteUnits(usage.functions.http) + billedWriteUnits(usage.functions.socket)) / run.events,
    fanoutWriteUnitsPerEvent: billedWriteUnits(usage.functions.fanout) / run.events,
    ingestReadUnitsPerEvent: (billedReadUnits(usage.functions.http) + billedReadUnits(usage.functions.authorizer) + billedReadUnits(usage.functions.socket)) / run.events,
    fanoutReadUnitsPerDelivery: deliveries > 0 ? billedReadUnits(usage.functions.fanout) / deliveries : undefined,
    recordsPerFanoutBatch: usage.functions.fanout.invocations > 0 ? usage.fanoutRecords / usage.functions.fanout.invocations : 0,
    dollarsPerMillion: dollarsPerMillion(usage, run.events, model),
  };
}

/** Every cost-grid row derived, with the duration model fed from the same results. */
export function deriveAll(results: BenchResults): Derived[] {
  const model = durationInputs(results, results.fanoutScale?.[0]?.concurrency ?? 256);
  return results.costGrid.map((run) => derive(run, model));
}

// ---- formatting ----

