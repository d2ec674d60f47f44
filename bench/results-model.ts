/** The shapes of the bench results, and the figures derived from one measured run (per 1,000 events, dollars). */
import type { ReconnectingConsumerResult } from './reconnecting-consumer.ts';
import type { StackUsage } from '../local/usage.ts';
import { FUNCTION_NAMES } from '../local/usage.ts';
import type { CpuResult } from './cpu.ts';
import type { LanesStageResult } from './fanout-lanes.ts';
import type { CostRun, IngestPath, SweepRun } from './cost.ts';
import type { DeliveryLatency, Distribution } from './latency.ts';
import type { FanoutScaleRun } from './fanout-scale.ts';
import type { HistoryBench } from './history.ts';
import type { PausedConsumerResult } from './paused-consumer.ts';
import type { BridgeCostRun } from './bridges.ts';
import { MEMORY_MB, PRICES } from './prices.ts';

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
  /** The reconnecting consumer (`bench/reconnecting-consumer.ts`); absent in results saved before it existed. */
  reconnectingConsumer?: ReconnectingConsumerResult;
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
  /** All per 1,000 ingested events. */
  writeUnits: number;
  readUnits: number;
  fanoutReadUnits: number;
  dynamoCalls: number;
  invocations: Record<(typeof FUNCTION_NAMES)[number] | 'total', number>;
  posts: number;
  deliveries: number;
  /** Write units the ingest handlers (HTTP and WebSocket functions) spent per event: the durable write. */
  writeUnitsPerEvent: number;
  /** Write units fan-out spent per event (session summaries, order states, late entries), outside the ingest path. */
  fanoutWriteUnitsPerEvent: number;
  readUnitsPerDelivery: number | undefined;
  fanoutReadUnitsPerDelivery: number | undefined;
  recordsPerFanoutBatch: number;
  dollarsPerMillion: DollarBreakdown;
}

export const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0);

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
    writeUnitsPerEvent: (usage.functions.http.writeUnits + usage.functions.socket.writeUnits) / run.events,
    fanoutWriteUnitsPerEvent: usage.functions.fanout.writeUnits / run.events,
    readUnitsPerDelivery: deliveries > 0 ? usage.dynamo.readUnits / deliveries : undefined,
    fanoutReadUnitsPerDelivery: deliveries > 0 ? usage.functions.fanout.readUnits / deliveries : undefined,
    recordsPerFanoutBatch: usage.functions.fanout.invocations > 0 ? usage.fanoutRecords / usage.functions.fanout.invocations : 0,
    dollarsPerMillion: dollarsPerMillion(usage, run.events),
  };
}

// ---- formatting ----

