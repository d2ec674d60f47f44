/** Measured counts into dollars: on-demand list prices (US East, compiled PRICE_TABLE_DATE; free and volume tiers ignored), memory sizes, billed units, the Lambda duration model. */
import { STREAM_MEMORY_MB } from '../infra/constructs/stream-memory.ts';
import type { CapacityTotals } from '../src/store/capacity-meter.ts';
import type { FunctionUsage, StackUsage } from '../local/usage.ts';
import { FUNCTION_NAMES } from '../local/usage.ts';
import { sum } from './stats.ts';

export const PRICE_TABLE_DATE = '2026-11-30';
const DYNAMO = 'https://aws.amazon.com/dynamodb/pricing/on-demand/';
const LAMBDA = 'https://aws.amazon.com/lambda/pricing/';
const APIGW = 'https://aws.amazon.com/api-gateway/pricing/';

export const PRICES = {
  dynamoWrite: { item: 'DynamoDB on-demand write request unit (Standard)', usd: 0.625, per: 'million WRU', source: DYNAMO },
  dynamoRead: { item: 'DynamoDB on-demand read request unit (Standard)', usd: 0.125, per: 'million RRU', source: DYNAMO },
  streamsRead: { item: 'DynamoDB Streams reads by a Lambda trigger', usd: 0, per: 'free for Lambda triggers', source: DYNAMO },
  lambdaRequest: { item: 'Lambda requests', usd: 0.2, per: 'million invocations', source: LAMBDA },
  lambdaArmGbSecond: { item: 'Lambda duration, Arm', usd: 0.0000133334, per: 'GB-second', source: LAMBDA },
  websocketMessage: { item: 'API Gateway WebSocket messages, sent or received (32 KB increments)', usd: 1.0, per: 'million messages', source: APIGW },
  websocketConnectionMinute: { item: 'API Gateway WebSocket connection minutes', usd: 0.25, per: 'million minutes', source: APIGW },
  httpApiRequest: { item: 'API Gateway HTTP API requests (512 KB increments)', usd: 1.0, per: 'million requests', source: APIGW },
} as const;

/** Function memory (MB), as infra/constructs/relay-functions.ts declares them; the stream function's is measured (SSE stream-hour). */
export const MEMORY_MB = { http: 512, authorizer: 256, socket: 512, fanout: 512, stream: STREAM_MEMORY_MB, bridges: 512, sinkretry: 256, fanoutlane: 1024 } as const;

type Metered = Pick<FunctionUsage, 'readUnits' | 'writeUnits'> & Partial<Pick<CapacityTotals, 'emptyReadUnits' | 'refusedWriteUnits'>>;
/** Units as billed: reads that found nothing and refused conditional writes at the least DynamoDB bills them. */
export const billedReadUnits = (usage: Metered): number => usage.readUnits + (usage.emptyReadUnits ?? 0);
export const billedWriteUnits = (usage: Metered): number => usage.writeUnits + (usage.refusedWriteUnits ?? 0);

/** PostToConnection round trip in-region, and a DynamoDB call in-region (single-digit ms; 5 taken). */
export const AWS_POST_MS = 20;
export const AWS_DYNAMO_CALL_MS = 5;

/** Posts fan-out keeps in flight (`AEP_FANOUT_CONCURRENCY`); its CPU ms per delivery from the lanes stage, 0 when not measured. */
export interface DurationModelInputs { concurrency: number; cpuMsPerDelivery: number }

/** Modelled GB-seconds (the stream function apart): DynamoDB calls + 1 ms each invocation, fan-out's posts `concurrency` in flight (at least its CPU), others at most their wall time. */
export function modelledGbSeconds(usage: StackUsage, inputs: DurationModelInputs): number {
  let gbSeconds = 0;
  for (const name of FUNCTION_NAMES) {
    const fn = usage.functions[name];
    if (name === 'stream' || fn.invocations === 0) continue;
    const base = fn.dynamoCalls * AWS_DYNAMO_CALL_MS + fn.invocations;
    const posts = usage.postToConnection.calls;
    const ms = name === 'fanout' ? base + Math.max((posts * AWS_POST_MS) / Math.max(1, inputs.concurrency), posts * inputs.cpuMsPerDelivery) : Math.min(fn.billedMs, base);
    gbSeconds += (ms / 1000) * (MEMORY_MB[name] / 1024);
  }
  return gbSeconds;
}

export function dollarsPerMillion(usage: StackUsage, events: number, model: DurationModelInputs) {
  const scale = 1_000_000 / events;
  const delivered = usage.postToConnection.byStatus['200'] ?? 0;
  const breakdown = {
    dynamoWrites: (billedWriteUnits(usage.dynamo) * scale * PRICES.dynamoWrite.usd) / 1e6,
    dynamoReads: (billedReadUnits(usage.dynamo) * scale * PRICES.dynamoRead.usd) / 1e6,
    lambdaRequests: (sum(FUNCTION_NAMES.map((name) => usage.functions[name].invocations)) * scale * PRICES.lambdaRequest.usd) / 1e6,
    lambdaDuration: modelledGbSeconds(usage, model) * scale * PRICES.lambdaArmGbSecond.usd,
    // Received: every inbound message invokes $default; sent: every delivered PostToConnection.
    websocketMessages: (((usage.socketRoutes['$default'] ?? 0) + delivered) * scale * PRICES.websocketMessage.usd) / 1e6,
    httpRequests: (usage.functions.http.invocations * scale * PRICES.httpApiRequest.usd) / 1e6,
  };
  return { ...breakdown, total: sum(Object.values(breakdown)) };
}
