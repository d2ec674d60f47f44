/** The reconnecting consumer: drops after every 5 to 40 events and resumes from its last position; counts connections, late entries and duplicates. */
import type { RunningStack } from '../../local/stack.ts';
import { eventKeys, LATE_PREFIX } from '../../src/store/keys.ts';
import { queryAll } from '../../src/store/table-access.ts';
import { localTableNames } from '../../local/create-tables.ts';
import { BenchSocket, createTenant, localDynamo, mintId, sleep, uniqueName } from '../clients.ts';
import type { Frame } from '../clients.ts';

export interface ReconnectRound {
  events: number;
  connections: number;
  lateEntries: number;
  duplicates: number;
  complete: boolean;
  wallMs: number;
}

export interface ReconnectingConsumerResult {
  rounds: ReconnectRound[];
  lateEntriesPerThousand: number;
  duplicatesPerEvent: number;
  connectionsPerRound: number;
}

const ROUND_TIMEOUT_MS = 60_000;

/** A seeded generator: the same drop points every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

export async function measureReconnectingConsumer(stack: RunningStack, options: { rounds: number; events: number }): Promise<ReconnectingConsumerResult> {
  const tenant = uniqueName('reconnect');
  const token = await createTenant(stack.dynamoEndpoint, tenant);
  const rounds: ReconnectRound[] = [];
  for (let round = 0; round < options.rounds; round += 1) rounds.push(await oneRound(stack, tenant, token, options.events, seeded(7000 + round)));
  const events = rounds.reduce((sum, run) => sum + run.events, 0);
  const sum = (pick: (run: ReconnectRound) => number) => rounds.reduce((total, run) => total + pick(run), 0);
  return { rounds, lateEntriesPerThousand: (sum((run) => run.lateEntries) * 1000) / events, duplicatesPerEvent: sum((run) => run.duplicates) / events, connectionsPerRound: sum((run) => run.connections) / rounds.length };
}

async function oneRound(stack: RunningStack, tenant: string, token: string, count: number, random: () => number): Promise<ReconnectRound> {
  const session = uniqueName('reconnect-session');
  const startedAt = performance.now();
  const ids = Array.from({ length: count }, () => mintId());
  const seen = new Set<string>();
  let received = 0;
  let connections = 0;
  let last = { epoch: 0, seq: -1 };
  const consuming = (async () => {
    while (seen.size < count && performance.now() - startedAt < ROUND_TIMEOUT_MS) {
      connections += 1;
      const take = 5 + Math.floor(random() * 36);
      let taken = 0;
      const consumer = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'r', filter: { session }, from: [{ session, ...last }] });
      await new Promise<void>((resolve) => {
        let idle: NodeJS.Timeout | undefined;
        const done = () => {
          off();
          if (idle !== undefined) clearTimeout(idle);
          resolve();
        };
        const off = consumer.on((frame: Frame) => {
          if (frame.session !== session || typeof frame.seq !== 'number') return;
          received += 1;
          seen.add(String(frame.id));
          last = { epoch: typeof frame.epoch === 'number' ? frame.epoch : 0, seq: frame.seq };
          taken += 1;
          if (taken >= take || seen.size >= count) done();
        });
        const poll = setInterval(() => {
          if (performance.now() - startedAt > ROUND_TIMEOUT_MS) {
            clearInterval(poll);
            done();
          }
        }, 200);
        idle = setTimeout(() => {
          clearInterval(poll);
          done();
        }, 2_000);
      });
      consumer.socket.terminate();
    }
  })();
  const emitter = await BenchSocket.consumer(stack.baseUrl, token, { role: 'emitter', identity: { agent: 'bench', instance: session } });
  ids.forEach((id, seq) => emitter.send({ aep: '0.1', id, type: 'progress.status', time: new Date().toISOString(), source: `aep://bench/agent/bench/session/${session}`, agent: 'bench', session, seq, data: { phase: 'step' } }));
  await consuming;
  await emitter.close();
  await sleep(100);
  return { events: count, connections, lateEntries: await lateEntriesOf(stack, tenant, session), duplicates: received - seen.size, complete: seen.size === count, wallMs: performance.now() - startedAt };
}

async function lateEntriesOf(stack: RunningStack, tenant: string, session: string): Promise<number> {
  const client = localDynamo(stack.dynamoEndpoint);
  try {
    return (await queryAll(client, localTableNames('aep-local').events, eventKeys.sessionPartition(tenant, session), LATE_PREFIX)).length;
  } finally {
    client.destroy();
  }
}
