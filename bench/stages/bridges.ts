/** What the AEP-0005 bridges add per 1,000 events: no sinks, one sink of each HTTP kind, all three (local receivers). */
import type { RunningStack } from '../../local/stack.ts';
import type { FunctionUsage } from '../../local/usage.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTenant, postBatches, settle, uniqueName, waitUntil } from '../clients.ts';
import { benchEvents } from '../workload.ts';

export type BridgeScenario = 'none' | 'cloudevents-webhook' | 'otlp' | 'ocsf-webhook' | 'all three';

export interface BridgeCostRun {
  scenario: BridgeScenario;
  events: number;
  sinkRequests: number;
  bridges: FunctionUsage;
}

/** A local sink: answers every request 200 and keeps its body. */
interface HttpReceiver {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<HttpReceiver> {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
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
  return receiver.bodies.reduce((total, text) => {
    if (kind === 'ocsf-webhook') return total + text.split('\n').filter(Boolean).length;
    if (kind === 'cloudevents-webhook') return total + (JSON.parse(text) as unknown[]).length;
    const body = JSON.parse(text) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: unknown[] }> }> };
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
    await postBatches(stack.baseUrl, token, events);
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
      sinkRequests: receivers.reduce((total, receiver) => total + receiver.bodies.length, 0),
      bridges: usage.functions.bridges,
    };
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  }
}
