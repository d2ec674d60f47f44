/** Latency on the local stack: POST → WebSocket, POST → SSE (SSE_STREAMS streams pooled) and the command round trip through the simulated agent. */
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import type { RunningStack } from '../../local/stack.ts';
import { BenchSocket, createTenant, mintId, openSse, postEvents, settle, sleep, uniqueName, waitUntil } from '../clients.ts';
import { distribution } from '../stats.ts';
import type { Distribution } from '../stats.ts';
import { benchEvent } from '../workload.ts';

export interface DeliveryLatency {
  paceMs: number;
  websocket: Distribution;
  sse: Distribution;
}

/** SSE streams, opened at staggered moments so that they sample the phases between the stream poll and each inbox poll. */
const SSE_STREAMS = 5;
const STAGGER_MS = 37;

/** The gap before the next POST: exponential with mean `meanMs` (Poisson arrivals sample every phase of the poll), capped at 5× the mean. */
function poissonGapMs(meanMs: number, random: () => number = Math.random): number {
  return Math.min(5 * meanMs, -meanMs * Math.log(1 - random()));
}

/** The consumers of one delivery measurement: each records when it received an event, by id. */
type Receivers = { at: Array<Map<string, number>>; close: () => Promise<void> };

async function openWebSocketReceiver(stack: RunningStack, token: string, session: string): Promise<Receivers> {
  const ws = await BenchSocket.consumer(stack.baseUrl, token, { role: 'consumer' }, { id: 'watch', filter: { session } });
  const at = new Map<string, number>();
  ws.on((frame, atMs) => {
    if (typeof frame.id === 'string' && frame.session === session) at.set(frame.id, atMs);
  });
  return { at: [at], close: () => ws.close() };
}

async function openSseReceivers(stack: RunningStack, token: string, session: string): Promise<Receivers> {
  const streams: Array<{ close: () => void; at: Map<string, number> }> = [];
  for (let index = 0; index < SSE_STREAMS; index += 1) {
    if (index > 0) await sleep(STAGGER_MS + Math.random() * STAGGER_MS);
    const sse = await openSse(stack.baseUrl, token, { filter: JSON.stringify({ session }) });
    await sse.opened;
    const at = new Map<string, number>();
    sse.onMessage((event, atMs) => {
      if (typeof event.id === 'string') at.set(event.id, atMs);
    });
    streams.push({ close: () => sse.close(), at });
  }
  return { at: streams.map((stream) => stream.at), close: async () => streams.forEach((stream) => stream.close()) };
}

/** POST → delivery on one binding, its consumers alone on the session (the SSE streams' inbox polls would weigh on the WebSocket tail). */
export async function measureDeliveryLatency(stack: RunningStack, binding: 'websocket' | 'sse', count: number, paceMs: number): Promise<Distribution> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-latency'));
  const session = uniqueName('latency');
  const receivers = binding === 'websocket' ? await openWebSocketReceiver(stack, token, session) : await openSseReceivers(stack, token, session);
  const everywhere = (id: string) => receivers.at.every((at) => at.has(id));
  let seq = 0;
  for (let round = 0; round < 20; round += 1) {
    const event = benchEvent(session, seq++);
    await postEvents(stack.baseUrl, token, JSON.stringify(event), 'application/json');
    await waitUntil(() => everywhere(event.id as string), () => `${binding} warm-up delivery`, 30_000, 2);
  }
  const sentAt = new Map<string, number>();
  const posts: Array<Promise<void>> = [];
  let due = performance.now();
  for (let index = 0; index < count; index += 1) {
    due += poissonGapMs(paceMs);
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const event = benchEvent(session, seq++);
    sentAt.set(event.id as string, performance.now());
    posts.push(postEvents(stack.baseUrl, token, JSON.stringify(event), 'application/json'));
  }
  await Promise.all(posts);
  const ids = [...sentAt.keys()];
  await waitUntil(() => ids.every(everywhere), () => `${binding} latency deliveries ${receivers.at.map((at) => ids.filter((id) => at.has(id)).length).join('/')} of ${ids.length}`, 60_000, 10);
  await receivers.close();
  await settle(stack);
  return distribution(receivers.at.flatMap((at) => ids.map((id) => (at.get(id) as number) - (sentAt.get(id) as number))));
}

/** Commands one at a time, each after a random pause of up to `spreadMs` (send times spread over the poll cycle). */
export async function measureCommandRoundTrip(stack: RunningStack, count: number, spreadMs: number): Promise<Distribution> {
  const token = await createTenant(stack.dynamoEndpoint, uniqueName('bench-control'));
  const session = uniqueName('controlled');
  const agent = new SimulatedAgent({ baseUrl: stack.baseUrl, token, agent: 'sim', session, accepts: ['control.pause', 'control.resume'] });
  await agent.start();
  await settle(stack);
  const phone = await BenchSocket.consumer(stack.baseUrl, token, { role: 'both', identity: { agent: 'phone' } }, { id: 'watch', filter: { session } });
  const rtts: number[] = [];
  const warmUp = 10;
  for (let index = 0; index < count + warmUp; index += 1) {
    const id = mintId();
    const command = { aep: '0.1', id, type: index % 2 === 0 ? 'control.pause' : 'control.resume', time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session, data: {} };
    const ack = phone.next((frame) => frame.cause === id && (frame.type === 'control.accepted' || frame.type === 'control.rejected' || frame.type === 'error'), 30_000);
    const startedAt = performance.now();
    phone.send(command);
    const frame = await ack;
    const elapsed = performance.now() - startedAt;
    if (frame.type !== 'control.accepted') throw new Error(`command not accepted: ${JSON.stringify(frame)}`);
    if (index >= warmUp) rtts.push(elapsed);
    await sleep(Math.random() * spreadMs);
  }
  await phone.close();
  await agent.stop();
  await settle(stack);
  return distribution(rtts);
}
