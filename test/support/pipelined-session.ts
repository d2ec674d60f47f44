/**
 * An emitter that pipelines one session's events over one socket, and a consumer that drops
 * its connection at random points and resumes from the last position it received, as the
 * protocol's official client does (AEP-0003 §7: strictly after that position).
 */
import { sessionEvent } from './relay-fixtures.ts';
import { helloSocket, isType } from './ws-client.ts';
import type { Frame, TestSocket } from './ws-client.ts';

export interface StackCoordinates {
  baseUrl: string;
  token: string;
}

/** Sends `count` events of `session` (seq 0..count-1) in one tick; resolves with the socket and the events' ids in seq order. */
export async function pipelineEvents(stack: StackCoordinates, session: string, count: number): Promise<{ emitter: TestSocket; ids: string[] }> {
  const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester', instance: session } }, { baseUrl: stack.baseUrl, token: stack.token });
  const events = Array.from({ length: count }, (_, seq) => sessionEvent(session, seq));
  for (const event of events) emitter.send(event);
  return { emitter, ids: events.map((event) => event.id as string) };
}

export interface ResumingConsumerOptions {
  /** Most events received on one connection before it is dropped (at random, 1..this). */
  maxPerConnection: number;
  /** Connections to open at least (each one after the first is a resume), even once everything is in. */
  minConnections: number;
  /** Gives up after this long (ms). */
  timeoutMs: number;
  random: () => number;
}

export interface ResumeReport {
  /** Every event frame received, in arrival order, across connections. */
  received: Frame[];
  /** Connections opened (1 + the resumes). */
  connections: number;
}

/**
 * Subscribes to `session` from before its first position, and each time it has received a
 * random number of events drops the connection and resumes strictly after the last position
 * it received, until it holds every id in `expected` and has resumed `minConnections - 1`
 * times (or the time is up). Once everything is in, a connection that receives nothing more
 * is dropped after a short while, so the remaining resumes replay from the end.
 */
export async function resumingConsumer(stack: StackCoordinates, session: string, expected: ReadonlySet<string>, options: ResumingConsumerOptions): Promise<ResumeReport> {
  const deadline = Date.now() + options.timeoutMs;
  const seen = new Set<string>();
  const received: Frame[] = [];
  let last: { epoch: number; seq: number } = { epoch: 0, seq: -1 };
  let connections = 0;
  const isEvent = (frame: Frame) => frame.session === session && typeof frame.type === 'string' && frame.type.includes('.');
  const missing = () => [...expected].some((id) => !seen.has(id));
  while ((missing() || connections < options.minConnections) && Date.now() < deadline) {
    connections += 1;
    const consumer = await helloSocket({ role: 'consumer' }, { baseUrl: stack.baseUrl, token: stack.token });
    consumer.send({ type: 'subscribe', id: 'resume', filter: { session }, from: [{ session, ...last }] });
    await consumer.next(isType('subscribed'));
    const quota = 1 + Math.floor(options.random() * options.maxPerConnection);
    let taken = 0;
    let index = 0;
    let lastFrameAt = Date.now();
    // Reads the connection's frames as they come, until its quota is taken (or all is in, or the time is up).
    while (taken < quota && Date.now() < deadline && (missing() || connections < options.minConnections)) {
      const frame = consumer.frames[index];
      if (frame === undefined) {
        if (!missing() && Date.now() - lastFrameAt > 100) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      lastFrameAt = Date.now();
      index += 1;
      if (!isEvent(frame)) continue;
      received.push(frame);
      seen.add(frame.id as string);
      last = { epoch: typeof frame.epoch === 'number' ? frame.epoch : 0, seq: frame.seq as number };
      taken += 1;
    }
    // Abrupt: no closing frame, the way a consumer's network drops.
    consumer.socket.terminate();
    await consumer.closed;
  }
  return { received, connections };
}
