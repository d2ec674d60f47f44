/** A fresh session beside a warm one: first delivery in stream polls, and write units per event (refused writes counted). */
import type { RunningStack } from '../../local/stack.ts';
import type { StackUsage } from '../../local/usage.ts';
import { billedWriteUnits } from '../pricing.ts';
import { BenchSocket, createTenant, settle, uniqueName, waitUntil } from '../clients.ts';
import { median } from '../stats.ts';
import { benchEvent } from '../workload.ts';

export interface BurstFigures {
  firstMs: number;
  allMs: number;
  writeUnitsPerEvent: number;
}

export interface FreshSessionResult {
  pollMs: number;
  events: number;
  rounds: Array<{ fresh: BurstFigures; warm: BurstFigures }>;
  freshFirstPolls: number;
  warmFirstPolls: number;
}

const totalWriteUnits = (usage: StackUsage) => Object.values(usage.functions).reduce((sum, f) => sum + billedWriteUnits(f), 0);

async function burst(stack: RunningStack, consumer: BenchSocket, emitter: BenchSocket, session: string, agent: string, firstSeq: number, events: number, hello?: object): Promise<BurstFigures> {
  await settle(stack);
  const unitsBefore = totalWriteUnits(stack.usage());
  const seen = new Set<number>();
  let firstAt = 0;
  let lastAt = 0;
  const off = consumer.on((frame, atMs) => {
    if (frame.session !== session || typeof frame.seq !== 'number' || frame.seq < firstSeq || seen.has(frame.seq)) return;
    seen.add(frame.seq);
    if (seen.size === 1) firstAt = atMs;
    lastAt = atMs;
  });
  // An event the relay could not take now (`unavailable`: its store timed out on a loaded
  // machine) is sent again with the same id, as a client does (AEP-0003 §6.5).
  const sent = new Map<string, Record<string, unknown>>();
  const offRefusals = emitter.on((frame) => {
    const refused = frame.type === 'error' && typeof frame.cause === 'string' ? sent.get(frame.cause) : undefined;
    if (refused !== undefined && (frame.code === 'unavailable' || frame.code === 'limit-exceeded')) setTimeout(() => emitter.send(refused), 100);
  });
  if (hello !== undefined) emitter.send(hello);
  const sentAt = performance.now();
  for (let seq = firstSeq; seq < firstSeq + events; seq += 1) {
    const event = benchEvent(session, seq, agent);
    sent.set(event.id as string, event);
    emitter.send(event);
  }
  await waitUntil(() => seen.size === events, () => `${seen.size} of ${events} delivered`, 60_000);
  off();
  offRefusals();
  await settle(stack);
  return { firstMs: firstAt - sentAt, allMs: lastAt - sentAt, writeUnitsPerEvent: (totalWriteUnits(stack.usage()) - unitsBefore) / events };
}

export async function measureFreshSession(stack: RunningStack, options: { rounds: number; events: number; pollMs: number }): Promise<FreshSessionResult> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('fresh'));
  const rounds: FreshSessionResult['rounds'] = [];
  for (let round = -1; round < options.rounds; round += 1) {
    const session = uniqueName('fresh-session');
    const agent = uniqueName('fresh-agent');
    const consumer = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'fresh', filter: { session } });
    const emitter = await BenchSocket.open(stack.baseUrl, token);
    const hello = { type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent, instance: `bench/${round}` }, capabilities: {} };
    const fresh = await burst(stack, consumer, emitter, session, agent, 0, options.events, hello);
    const warm = await burst(stack, consumer, emitter, session, agent, options.events, options.events);
    if (round >= 0) rounds.push({ fresh, warm });
    await Promise.all([consumer.close(), emitter.close()]);
  }
  const polls = (ms: number) => ms / options.pollMs;
  return {
    pollMs: options.pollMs,
    events: options.events,
    rounds,
    freshFirstPolls: median(rounds.map((round) => polls(round.fresh.firstMs))),
    warmFirstPolls: median(rounds.map((round) => polls(round.warm.firstMs))),
  };
}
