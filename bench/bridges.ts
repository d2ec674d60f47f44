/**
 * What the AEP-0005 bridges add per event: the same 1,000 events (NDJSON batches of 100) posted
 * to a tenant with no sinks, then with one sink of each HTTP kind, then with all three, each
 * sink a local receiver. The bridges function's invocations and request units, and the requests
 * the sinks receive, are counted per 1,000 events.
 */
import type { RunningStack } from '../local/stack.ts';
import type { FunctionUsage } from '../local/usage.ts';
import { startReceiver } from '../test/support/http-receiver.ts';
import type { HttpReceiver } from '../test/support/http-receiver.ts';
import { createTenant, postEvents, uniqueName, waitUntil } from './clients.ts';
import { settle } from './cost.ts';
import { benchEvents } from './workload.ts';

export type BridgeScenario = 'none' | 'cloudevents-webhook' | 'otlp' | 'ocsf-webhook' | 'all three';

export interface BridgeCostRun {
  scenario: BridgeScenario;
  events: number;
  /** Requests the receivers answered, over all sinks of the scenario. */
  sinkRequests: number;
  /** The bridges function's usage (its DynamoDB reads are the sink settings per tenant and batch). */
  bridges: FunctionUsage;
}

const SINKS: Record<Exclude<BridgeScenario, 'none' | 'all three'>, (url: string) => Record<string, unknown>> = {
  'cloudevents-webhook': (url) => ({ name: 'hook', kind: 'cloudevents-webhook', url }),
  otlp: (url) => ({ name: 'otel', kind: 'otlp', endpoint: `${url}/v1/logs`, headers: { 'x-api-key': 'bench' } }),
  'ocsf-webhook': (url) => ({ name: 'siem', kind: 'ocsf-webhook', url }),
};

/** Items each sink receives for the bench workload: every event, or (OCSF) the tool events only. */
function expectedItems(kind: keyof typeof SINKS, events: number): number {
  return kind === 'ocsf-webhook' ? Math.ceil(events / 2) : events;
}

function itemsOf(kind: keyof typeof SINKS, receiver: HttpReceiver): number {
  return receiver.accepted().reduce((total, request) => {
    if (kind === 'ocsf-webhook') return total + request.body.split('\n').filter(Boolean).length;
    if (kind === 'cloudevents-webhook') return total + (JSON.parse(request.body) as unknown[]).length;
    const body = JSON.parse(request.body) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: unknown[] }> }> };
    return total + body.resourceLogs.reduce((sum, resource) => sum + resource.scopeLogs.reduce((inner, scope) => inner + scope.logRecords.length, 0), 0);
  }, 0);
}

export async function runBridgeCost(stack: RunningStack, scenario: BridgeScenario, eventCount: number): Promise<BridgeCostRun> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-bridges'));
  const kinds = scenario === 'none' ? [] : scenario === 'all three' ? (Object.keys(SINKS) as Array<keyof typeof SINKS>) : [scenario];
  const receivers = await Promise.all(kinds.map(() => startReceiver()));
  try {
    const sinks = kinds.map((kind, index) => SINKS[kind](receivers[index]?.url ?? ''));
    const set = await fetch(`${stack.baseUrl}/admin/bridges`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sinks }) });
    if (set.status !== 200) throw new Error(`setting bridge sinks answered ${set.status}: ${await set.text()}`);
    const events = benchEvents(uniqueName('bridged'), eventCount);
    await settle(stack);
    stack.resetUsage();
    for (let offset = 0; offset < events.length; offset += 100) {
      const body = events.slice(offset, offset + 100).map((event) => JSON.stringify(event)).join('\n') + '\n';
      await postEvents(stack.baseUrl, token, body, 'application/x-ndjson');
    }
    await waitUntil(
      () => stack.usage().fanoutRecords >= eventCount && kinds.every((kind, index) => itemsOf(kind, receivers[index] as HttpReceiver) >= expectedItems(kind, eventCount)),
      () => `bridge deliveries for ${scenario}`,
      120_000,
      10,
    );
    await settle(stack, 600);
    const usage = stack.usage();
    return {
      scenario,
      events: eventCount,
      sinkRequests: receivers.reduce((total, receiver) => total + receiver.accepted().length, 0),
      bridges: usage.functions.bridges,
    };
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  }
}

/**
 * The BENCHMARKS.md section. Everything the bridges function does is added cost (ingest and
 * fan-out are unchanged by sinks), so its own figures are the added cost per sink configuration.
 */
export function bridgeCostLines(runs: readonly BridgeCostRun[]): string[] {
  if (runs.length === 0) return [];
  const per1000 = (value: number, events: number) => ((value * 1000) / events).toFixed(1);
  return [
    '## Bridges (AEP-0005 sinks)',
    '',
    `The same ${runs[0]?.events} events (NDJSON batches of 100) posted to tenants with no sinks, one sink of each HTTP kind, and all three, each sink a local receiver (\`bench/bridges.ts\`). Figures per 1,000 events, all of them added cost: ingest and fan-out do not change with sinks. The bridges function reads a tenant's sink settings once per stream batch (one strongly consistent GetItem, 1 RRU) and writes nothing unless a sink fails for good (dead letters); a "none" tenant still costs that read. Sink requests grow with batches, not events (up to 100 events per webhook or OTLP request).`,
    '',
    '| Sinks | Bridges invocations | Bridges RRU | Bridges WRU | Sink requests |',
    '|---|---:|---:|---:|---:|',
    ...runs.map((run) => `| ${run.scenario} | ${per1000(run.bridges.invocations, run.events)} | ${per1000(run.bridges.readUnits, run.events)} | ${per1000(run.bridges.writeUnits, run.events)} | ${per1000(run.sinkRequests, run.events)} |`),
    '',
  ];
}
