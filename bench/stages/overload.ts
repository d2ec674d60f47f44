/**
 * Overload on the local stack with `npm start`'s own defaults (issue 46, points 3 and 6): tenant
 * A floods (many sockets pipelining events without waiting, many live consumers of its own)
 * while tenant B's canary emits at a steady pace to a consumer of its own. Counted: B's events
 * lost (none may be), A's frames refused in-band by code, upgrades answered 5xx, and duplicates
 * per delivered event over every consumer (an event id a consumer got again). B's live latency
 * beside the flood is given as a ratio to B alone in the same run, named noisy: it measures
 * what one DynamoDB Local absorbs as much as the relay.
 */
import { startStack } from '../../local/stack.ts';
import type { RunningStack } from '../../local/stack.ts';
import { LOCAL_EVENTS_PER_SECOND } from '../../local/local-defaults.ts';
import { BenchSocket, createTenant, postEvents, sleep, uniqueName } from '../clients.ts';
import { distribution } from '../stats.ts';
import type { Distribution } from '../stats.ts';
import { benchEvent } from '../workload.ts';

export interface OverloadResult {
  eventsPerSecondPerTenant: number;
  flood: { sockets: number; framesSent: number; consumers: number; refused: Record<string, number>; upgrades5xx: number };
  canary: { events: number; alone: Distribution; beside: Distribution; lostBeside: number };
  delivered: number;
  duplicates: number;
}

/** B's canary: `events` POSTed one by one at `paceMs` to a WebSocket consumer of its own; latency per event. */
async function canary(stack: RunningStack, token: string, events: number, paceMs: number, opened?: Promise<{ consumer: BenchSocket; session: string }>): Promise<{ latencies: number[]; lost: number }> {
  const { consumer, session } = await (opened ?? canaryConsumer(stack, token));
  const sentAt = new Map<number, number>();
  const latencies = new Map<number, number>();
  consumer.on((frame, atMs) => {
    const at = sentAt.get(frame.seq as number);
    if (frame.session === session && at !== undefined && !latencies.has(frame.seq as number)) latencies.set(frame.seq as number, atMs - at);
  });
  for (let seq = 0; seq < events; seq += 1) {
    sentAt.set(seq, performance.now());
    await postEvents(stack.baseUrl, token, JSON.stringify(benchEvent(session, seq)), 'application/json');
    await sleep(paceMs);
  }
  const deadline = performance.now() + 60_000;
  while (latencies.size < events && performance.now() < deadline) await sleep(100);
  await consumer.close();
  return { latencies: [...latencies.values()], lost: events - latencies.size };
}

/** B's consumer, subscribed before anything is measured (a hello in the middle of the flood is what the flood refuses first). */
async function canaryConsumer(stack: RunningStack, token: string): Promise<{ consumer: BenchSocket; session: string }> {
  const session = uniqueName('canary');
  return { consumer: await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'canary', filter: { session } }), session };
}

export async function measureOverload(options: { dataDir: string; sockets: number; framesPerSocket: number; consumers: number; canaryEvents: number; log: (line: string) => void }): Promise<OverloadResult> {
  // `npm start`'s defaults: the per-tenant event rate one DynamoDB Local serves, the frame budget as shipped.
  const stack = await startStack({ port: 0, inMemory: true, dataDir: options.dataDir, env: { AEP_DEFAULT_EVENTS_PER_SECOND: String(LOCAL_EVENTS_PER_SECOND) } });
  try {
    const a = await createTenant(stack.dynamoEndpoint, uniqueName('flood-a'));
    const b = await createTenant(stack.dynamoEndpoint, uniqueName('canary-b'));
    options.log('overload: B alone');
    const alone = await canary(stack, b, options.canaryEvents, 100);

    // Every consumer counts what it got by event id: a second copy is a duplicate delivery.
    const seen = new Map<BenchSocket, Set<string>>();
    let delivered = 0;
    let duplicates = 0;
    const count = (socket: BenchSocket) =>
      socket.on((frame) => {
        if (typeof frame.aep !== 'string') return;
        const ids = seen.get(socket) ?? new Set<string>();
        seen.set(socket, ids);
        if (ids.has(frame.id as string)) duplicates += 1;
        else (ids.add(frame.id as string), (delivered += 1));
      });
    const besideConsumer = canaryConsumer(stack, b);
    await besideConsumer;
    const consumers = await Promise.all(Array.from({ length: options.consumers }, () => BenchSocket.consumer(stack.baseUrl, a, { role: 'consumer' }, { id: 'all', filter: {} })));
    consumers.forEach(count);

    options.log(`overload: A floods with ${options.sockets} sockets × ${options.framesPerSocket} frames beside B`);
    const refused: Record<string, number> = {};
    let upgrades5xx = 0;
    const flood = Array.from({ length: options.sockets }, async (_, index) => {
      const socket = await BenchSocket.open(stack.baseUrl, a).catch((error: Error) => {
        if (/handshake refused: 5\d\d/.test(error.message)) upgrades5xx += 1;
        return undefined;
      });
      if (socket === undefined) return;
      socket.on((frame) => {
        if (frame.type === 'error') refused[String(frame.code)] = (refused[String(frame.code)] ?? 0) + 1;
      });
      const agent = `flood-${index}`;
      socket.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent }, capabilities: {} });
      const session = uniqueName('flood');
      for (let seq = 0; seq < options.framesPerSocket; seq += 1) socket.send(benchEvent(session, seq, agent));
      await sleep(20_000);
      await socket.close();
    });
    const [beside] = await Promise.all([canary(stack, b, options.canaryEvents, 100, besideConsumer), ...flood]);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    return {
      eventsPerSecondPerTenant: LOCAL_EVENTS_PER_SECOND,
      flood: { sockets: options.sockets, framesSent: options.sockets * options.framesPerSocket, consumers: options.consumers, refused, upgrades5xx },
      canary: { events: options.canaryEvents, alone: distribution(alone.latencies), beside: distribution(beside.latencies), lostBeside: beside.lost },
      delivered,
      duplicates,
    };
  } finally {
    await stack.stop();
  }
}
