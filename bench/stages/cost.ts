/** Cost scenarios: units, invocations and posts per ingest path and subscriber count; the sweeps of subscriptions that cannot match; an idle subscriber. */
import type { RunningStack } from '../../local/stack.ts';
import type { StackUsage } from '../../local/usage.ts';
import { BenchSocket, createTenant, inPool, localDynamo, postBatches, postEvents, settle, sleep, uniqueName, waitUntil } from '../clients.ts';
import { BENCH_AGENT, benchEvents, expectedDeliveries, subscriberMix } from '../workload.ts';
import { localTableNames } from '../../local/create-tables.ts';
import { Opening } from '../../src/relay/order/consumer-has.ts';
import { handOffToLive } from '../../src/relay/subscribe/subscription-handoff.ts';
import { recordSubscription } from '../../src/relay/subscribe/open-subscription.ts';
import { compileFilter, validateFilter } from '../../src/protocol/attr-match.ts';
import { connectionTableStores } from '../../src/store/connection-table.ts';
import type { SubscriberSpec } from '../workload.ts';

export type IngestPath = 'single' | 'batch100' | 'websocket';

export const INGEST_LABELS: Record<IngestPath, string> = { single: 'single POSTs', batch100: 'NDJSON batches of 100', websocket: 'WebSocket emits' };

export interface CostRun {
  ingest: IngestPath;
  subscribers: number;
  events: number;
  expectedDeliveries: number;
  receivedDeliveries: number;
  usage: StackUsage;
  setup: StackUsage;
}

export interface SweepRun {
  kind: 'session-unmatched' | 'type-unmatched';
  unmatched: number;
  events: number;
  receivedDeliveries: number;
  usage: StackUsage;
}

async function openSubscribers(stack: RunningStack, token: string, specs: readonly SubscriberSpec[]): Promise<BenchSocket[]> {
  const sockets: BenchSocket[] = new Array(specs.length);
  await inPool(specs, 10, async (spec, index) => {
    sockets[index] = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: `s${index}`, filter: spec.filter });
  });
  return sockets;
}

async function openEmitter(stack: RunningStack, token: string): Promise<BenchSocket> {
  return BenchSocket.consumer(stack.baseUrl, token, {
    role: 'emitter',
    identity: { agent: BENCH_AGENT, instance: `bench/${process.pid}` },
    capabilities: { emits: ['tool', 'progress'] },
  });
}

/** Sends `events` the way `ingest` says; resolves once every event has been handed to a handler that has returned. */
async function ingest(stack: RunningStack, token: string, path: IngestPath, events: ReadonlyArray<Record<string, unknown>>, emitter?: BenchSocket): Promise<void> {
  switch (path) {
    case 'single':
      await inPool(events, 4, (event) => postEvents(stack.baseUrl, token, JSON.stringify(event), 'application/json'));
      return;
    case 'batch100':
      await postBatches(stack.baseUrl, token, events);
      return;
    case 'websocket': {
      if (emitter === undefined) throw new Error('websocket ingest needs an emitter');
      const base = stack.usage().functions.socket.completed;
      let errors = 0;
      const off = emitter.on((frame) => {
        if (frame.type === 'error') errors += 1;
      });
      for (const [index, event] of events.entries()) {
        if (index - (stack.usage().functions.socket.completed - base) >= 8) {
          await waitUntil(() => index - (stack.usage().functions.socket.completed - base) < 8, () => 'emitter window', 60_000, 1);
        }
        emitter.send(event);
      }
      await waitUntil(() => stack.usage().functions.socket.completed - base >= events.length, () => 'socket invocations for every emitted event', 60_000, 2);
      off();
      if (errors > 0) throw new Error(`the relay refused ${errors} emitted events`);
      return;
    }
  }
}

/** One subscriber mix (`subscriberMix`), opened once, then each ingest path in turn on the same session, each with its own counters. */
export async function runCostGroup(stack: RunningStack, subscribers: number, phases: ReadonlyArray<{ path: IngestPath; events: number }>): Promise<CostRun[]> {
  const tenant = uniqueName('bench-cost');
  const token = await createTenant(stack.dynamoEndpoint, tenant);
  const session = uniqueName('events');
  const specs = subscriberMix(subscribers, session);

  await settle(stack);
  stack.resetUsage();
  const sockets = await openSubscribers(stack, token, specs);
  const emitter = phases.some((phase) => phase.path === 'websocket') ? await openEmitter(stack, token) : undefined;
  await settle(stack);
  const setup = stack.usage();

  const runs: CostRun[] = [];
  let seq = 0;
  for (const phase of phases) {
    const events = benchEvents(session, phase.events, seq);
    seq += phase.events;
    const expected = expectedDeliveries(specs, events);
    const expectedTotal = expected.reduce((sum, count) => sum + count, 0);
    const before = sockets.map((socket) => socket.events);
    const receivedNow = () => sockets.reduce((sum, socket, index) => sum + socket.events - (before[index] ?? 0), 0);
    stack.resetUsage();
    await ingest(stack, token, phase.path, events, emitter);
    await waitUntil(
      () => stack.usage().fanoutRecords >= phase.events && sockets.every((socket, index) => socket.events - (before[index] ?? 0) >= (expected[index] ?? 0)),
      () => `deliveries: fan-out saw ${stack.usage().fanoutRecords}/${phase.events} records; received ${receivedNow()}/${expectedTotal}`,
      120_000,
      10,
    );
    await settle(stack);
    runs.push({
      ingest: phase.path,
      subscribers,
      events: phase.events,
      expectedDeliveries: expectedTotal,
      receivedDeliveries: receivedNow(),
      usage: stack.usage(),
      setup,
    });
  }
  await Promise.all([...sockets, ...(emitter === undefined ? [] : [emitter])].map((socket) => socket.close()));
  return runs;
}

/**
 * One subscriber on the events' session plus `unmatched` subscriptions on other sessions or on
 * `attention.*`, recorded with the relay's own `recordSubscription` on socketless connections.
 */
export async function runSweepScenario(stack: RunningStack, kind: SweepRun['kind'], unmatched: number, eventCount: number): Promise<SweepRun> {
  const tenant = uniqueName('bench-sweep');
  const token = await createTenant(stack.dynamoEndpoint, tenant);
  const session = uniqueName('events');
  const events = benchEvents(session, eventCount);
  const matching = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'match', filter: { session } });
  const client = localDynamo(stack.dynamoEndpoint);
  const stores = connectionTableStores(client, { tableName: localTableNames('aep-local').connections, now: Date.now, connectionLifetimeSeconds: 3600, maxPendingBytes: 256 * 1024 });
  const principal = { tenant, tokenId: 'bench-holder', scopes: ['consume' as const] };
  const perConnection = 32;
  const holders = Array.from({ length: Math.ceil(unmatched / perConnection) }, (_, index) => ({ connectionId: `bench-holder-${index}`, size: Math.min(perConnection, unmatched - index * perConnection) }));
  try {
    await inPool(holders, 4, async ({ connectionId, size }) => {
      await stores.connections.createConnection(tenant, connectionId, principal);
      await inPool(
        Array.from({ length: size }, (_, index) => `u${index}`),
        8,
        async (subscriptionId) => {
          const filter = kind === 'session-unmatched' ? { session: uniqueName('elsewhere') } : { type: 'attention.*' };
          const validated = validateFilter(filter);
          if (!validated.ok) throw new Error(`sweep filter refused: ${validated.reason}`);
          const recorded = await recordSubscription(stores, { tenant, connectionId, subscriptionId, filter: validated.filter, matches: compileFilter(validated.filter), ceiling: undefined, from: undefined }, perConnection);
          if (!recorded) throw new Error('could not record a sweep subscription');
          await handOffToLive(stores, { tenant, connectionId, subscriptionId, ceiling: undefined, opening: new Opening(), deliver: async () => true });
        },
      );
    });
    await settle(stack);
    stack.resetUsage();
    await ingest(stack, token, 'batch100', events);
    await waitUntil(
      () => stack.usage().fanoutRecords >= eventCount && matching.events >= eventCount,
      () => `sweep deliveries ${matching.events}/${eventCount}`,
      120_000,
      10,
    );
    await settle(stack);
    return { kind, unmatched, events: eventCount, receivedDeliveries: matching.events, usage: stack.usage() };
  } finally {
    await matching.close();
    await inPool(holders, 4, ({ connectionId }) => stores.connections.removeConnection(tenant, connectionId));
    client.destroy();
  }
}

/** One idle WebSocket subscriber held open for `seconds` (an idle SSE stream is the SSE stream-hour's). */
export async function measureStanding(stack: RunningStack, seconds: number): Promise<{ seconds: number; usage: StackUsage }> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-idle'));
  const session = uniqueName('quiet');
  const ws = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'idle', filter: { session } });
  await sleep(500);
  stack.resetUsage();
  await sleep(seconds * 1000);
  const usage = stack.usage();
  await ws.close();
  await settle(stack);
  return { seconds, usage };
}
