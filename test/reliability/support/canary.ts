/**
 * Tenant B's canary for the noisy-neighbour suite: an emitter that POSTs one event at a time
 * at a steady pace and a consumer (an SSE stream or a WebSocket subscription) that times each
 * event from its POST to its arrival. What a run reports: what was sent, received, refused,
 * and the delivery latencies (count, p50, p99).
 */
import { expect } from 'vitest';
import { localTableNames } from '../../../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../../../local/local-credentials.ts';
import { hashTokenSecret, mintTokenSecret } from '../../../src/auth/token-secret.ts';
import type { Scope } from '../../../src/auth/scopes.ts';
import { createDynamoClient } from '../../../src/store/dynamo-client.ts';
import { tenantTableStores } from '../../../src/store/tenant-table.ts';
import { mintId, postEvents, sessionEvent, uniqueName } from '../../support/relay-fixtures.ts';
import { readSse } from '../../support/sse-reader.ts';
import { helloSocket } from '../../support/ws-client.ts';

/** A tenant with one token of `scopes`, written straight into a stack of the test's own. */
export async function ownTenant(dynamoEndpoint: string, prefix: string, scopes: Scope[]): Promise<{ tenant: string; token: string }> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint: dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  const { tenants, tokens } = tenantTableStores(client, localTableNames('aep-local').tenants, Date.now);
  const tenant = uniqueName(prefix);
  await tenants.ensureTenant(tenant);
  const token = mintTokenSecret();
  await tokens.putToken({ tenant, tokenId: `tok-${mintId().toLowerCase()}`, scopes }, hashTokenSecret(token));
  return { tenant, token };
}

export interface CanaryReport {
  sent: number;
  received: number;
  /** Requests of B the relay refused (any status but 202, or a stream not opened). */
  refused: string[];
  p50: number;
  p90: number;
  p99: number;
}

export interface CanaryOptions {
  baseUrl: string;
  token: string;
  consumer: 'sse' | 'socket';
  events: number;
  intervalMs: number;
}

/** Runs the canary once: opens the consumer, emits `events` events `intervalMs` apart, and waits for them all (or 60 s past the last). */
export async function runCanary(options: CanaryOptions): Promise<CanaryReport> {
  const session = uniqueName('canary');
  const sentAt = new Map<number, number>();
  const arrivedAt = new Map<number, number>();
  const refused: string[] = [];
  const arrive = (seq: unknown) => {
    if (typeof seq === 'number' && !arrivedAt.has(seq)) arrivedAt.set(seq, Date.now());
  };
  const filter = JSON.stringify({ session });
  let stop: () => Promise<void>;
  if (options.consumer === 'sse') {
    const controller = new AbortController();
    const response = await fetch(`${options.baseUrl}/stream?${new URLSearchParams({ filter }).toString()}`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${options.token}` }, signal: controller.signal });
    if (response.status !== 200) throw new Error(`the canary's stream was refused: ${response.status} ${await response.text()}`);
    let live!: () => void;
    const ready = new Promise<void>((resolve) => (live = resolve));
    const ended = readSse(response.body!, {
      onMessage: ({ data }) => arrive((JSON.parse(data) as { seq?: unknown }).seq),
      onComment: (text) => {
        if (text === 'replay-complete') live();
      },
    }).catch(() => undefined);
    await ready;
    stop = async () => {
      controller.abort();
      await ended;
    };
  } else {
    const consumer = await helloSocket({}, { baseUrl: options.baseUrl, token: options.token });
    consumer.socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { session?: unknown; seq?: unknown };
      if (frame.session === session) arrive(frame.seq);
    });
    consumer.send({ type: 'subscribe', id: 'canary', filter: { session } });
    const answer = await consumer.next((frame) => frame.id === 'canary', 30_000);
    if (answer.type !== 'subscribed') throw new Error(`the canary's subscribe was refused: ${JSON.stringify(answer)}`);
    stop = () => consumer.close();
  }
  for (let seq = 0; seq < options.events; seq += 1) {
    const started = Date.now();
    sentAt.set(seq, started);
    const response = await postEvents(JSON.stringify(sessionEvent(session, seq)), { baseUrl: options.baseUrl, token: options.token });
    if (response.status !== 202) refused.push(`POST seq ${seq}: ${response.status} ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.intervalMs - (Date.now() - started))));
  }
  const deadline = Date.now() + 60_000;
  while (arrivedAt.size < options.events && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  await stop();
  const latencies = [...arrivedAt].map(([seq, at]) => at - (sentAt.get(seq) as number)).sort((left, right) => left - right);
  const percentile = (fraction: number) => latencies[Math.min(latencies.length - 1, Math.ceil(fraction * latencies.length) - 1)] ?? Number.POSITIVE_INFINITY;
  return { sent: options.events, received: arrivedAt.size, refused, p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99) };
}

/**
 * B beside A: loses nothing and is refused nothing. How much slower B gets beside A is printed
 * (`describeRun`) and measured by the bench, not bounded here: a percentile on a shared 2-core
 * machine moves by more than half of itself from scheduling noise alone, and a test that a
 * healthy relay fails on a busy machine proves nothing.
 */
export function expectUndisturbed(alone: CanaryReport, beside: CanaryReport): void {
  expect(alone.received, 'B alone received every event').toBe(alone.sent);
  expect(beside.refused, 'B beside A was refused nothing').toEqual([]);
  expect(beside.received, 'B beside A lost nothing').toBe(beside.sent);
}

export function describeRun(label: string, report: CanaryReport): string {
  return `${label}: ${report.received}/${report.sent} delivered, ${report.refused.length} refused, p50 ${report.p50} ms, p90 ${report.p90} ms, p99 ${report.p99} ms`;
}
