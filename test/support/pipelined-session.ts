/**
 * An emitter that pipelines one session's events over one socket, and a consumer that drops
 * its connection at random moments and resumes from the last position it received (AEP-0003 §7:
 * strictly after that position).
 */
import { sessionEvent } from './relay-fixtures.ts';
import { helloSocket } from './ws-client.ts';
import type { Frame, TestSocket } from './ws-client.ts';

export interface StackCoordinates {
  baseUrl: string;
  token: string;
}

export interface PipelinedBurst {
  /** The events' ids, in seq order. */
  ids: string[];
  /** Every `error` frame the emitter received, across its connections. */
  refusals: Frame[];
  /** Connections the emitter opened (1 + the ones after the relay closed one). */
  connections(): number;
  /** Stops resending and closes the emitter's connection. */
  close(): Promise<void>;
}

/** Refusals an emitter answers by sending the event again (AEP-0003 §3: delivery is at-least-once from the emitter's side). */
const RESEND_CODES = new Set(['unavailable', 'limit-exceeded']);

/**
 * Sends `count` events of `session` (seq 0..count-1) over one socket in one tick, then acts as
 * the at-least-once emitter the protocol expects: an event refused with `unavailable` or
 * `limit-exceeded` is sent again with its id, and when the relay ends the connection (a busy
 * relay does, 1013 or an `unavailable` that ends it) every event is sent again on a new one (the
 * relay's `(source, id)` dedupe keeps those already stored once), until `close()`.
 */
export async function pipelineEvents(stack: StackCoordinates, session: string, count: number): Promise<PipelinedBurst> {
  const events = Array.from({ length: count }, (_, seq) => sessionEvent(session, seq));
  const byId = new Map(events.map((event) => [event.id as string, event]));
  const refusals: Frame[] = [];
  let connections = 0;
  let stopped = false;
  let current: TestSocket | undefined;
  const connect = async (): Promise<void> => {
    while (!stopped) {
      try {
        const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester', instance: session } }, { baseUrl: stack.baseUrl, token: stack.token });
        connections += 1;
        current = emitter;
        emitter.socket.on('message', (data) => {
          const frame = JSON.parse(data.toString()) as Frame;
          if (frame.type !== 'error') return;
          refusals.push(frame);
          const event = byId.get(frame.cause as string);
          if (event !== undefined && RESEND_CODES.has(frame.code as string)) setTimeout(() => !stopped && emitter.socket.readyState === emitter.socket.OPEN && emitter.send(event), 100);
        });
        emitter.socket.once('close', () => {
          if (!stopped) setTimeout(() => void connect(), 200);
        });
        for (const event of events) emitter.send(event);
        return;
      } catch {
        // A busy relay refuses the upgrade (429 or 503) or the hello: connect again shortly.
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
  await connect();
  return {
    ids: events.map((event) => event.id as string),
    refusals,
    connections: () => connections,
    close: async () => {
      stopped = true;
      await current?.close();
    },
  };
}

export interface ResumingConsumerOptions {
  /** Each connection is dropped at a random moment between these two (ms after it subscribed). */
  minLifeMs: number;
  maxLifeMs: number;
  /** Or after taking a random number of events between these two (a flaky network that drops every few events). */
  dropAfterEvents?: { min: number; max: number };
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
  /** Per connection: the position it resumed after, and the seqs it took, in order. */
  trail: Array<{ after: { epoch: number; seq: number }; seqs: number[]; other: string[] }>;
}

/**
 * Subscribes to `session` from before its first position, drops the connection at a random
 * moment, and resumes strictly after the last position it received (the last event frame that
 * came, whatever its position), until it holds every id in `expected` and has resumed
 * `minConnections - 1` times (or the time is up). Once everything is in, a connection that
 * receives nothing more is dropped after a short while, so the remaining resumes replay from the end.
 */
export async function resumingConsumer(stack: StackCoordinates, session: string, expected: ReadonlySet<string>, options: ResumingConsumerOptions): Promise<ResumeReport> {
  const deadline = Date.now() + options.timeoutMs;
  const seen = new Set<string>();
  const received: Frame[] = [];
  let last: { epoch: number; seq: number } = { epoch: 0, seq: -1 };
  let connections = 0;
  const trail: ResumeReport['trail'] = [];
  const isEvent = (frame: Frame) => frame.session === session && typeof frame.type === 'string' && frame.type.includes('.');
  // `expected` may still be empty when this starts (the burst is being sent): that counts as missing.
  const missing = () => expected.size === 0 || [...expected].some((id) => !seen.has(id));
  while ((missing() || connections < options.minConnections) && Date.now() < deadline) {
    connections += 1;
    const consumer = await helloSocket({ role: 'consumer' }, { baseUrl: stack.baseUrl, token: stack.token });
    consumer.send({ type: 'subscribe', id: 'resume', filter: { session }, from: [{ session, ...last }] });
    // `other`: the connection's frames that are not events, its hello and `subscribed` aside (by type and code), and how it ended, for a failing round's report.
    const taking = { after: last, seqs: [] as number[], other: [] as string[] };
    trail.push(taking);
    // A busy relay refuses the subscribe (`limit-exceeded` or `unavailable`: "send it again"), at
    // once or, its replay out of time, after `subscribed`: the consumer subscribes again, on a new
    // connection here, after the last position it received, as the refusal asks (the frames are
    // taken below, the refusal with them).
    const refusedSubscribe = (frame: Frame) => frame.type === 'error' && frame.id === 'resume';
    await consumer.next((frame) => frame.type === 'subscribed' || refusedSubscribe(frame));
    let refused = false;
    const dropAt = Date.now() + options.minLifeMs + options.random() * (options.maxLifeMs - options.minLifeMs);
    const { dropAfterEvents } = options;
    const takeAtMost = dropAfterEvents === undefined ? Number.POSITIVE_INFINITY : dropAfterEvents.min + Math.floor(options.random() * (dropAfterEvents.max - dropAfterEvents.min + 1));
    let index = 0;
    let lastFrameAt = Date.now();
    // Takes the connection's frames as they come, until its moment to drop (or all is in, or the time is up).
    while ((dropAfterEvents !== undefined || Date.now() < dropAt) && taking.seqs.length < takeAtMost && Date.now() < deadline && (missing() || connections < options.minConnections)) {
      const frame = consumer.frames[index];
      if (frame === undefined) {
        if (!missing() && Date.now() - lastFrameAt > 100) break;
        // The relay ended the connection (a `closing` for backpressure, say): resume, as a client does (AEP-0003 §7).
        if (consumer.socket.readyState !== consumer.socket.OPEN) {
          taking.other.push(`closed ${(await consumer.closed).code}`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
        continue;
      }
      lastFrameAt = Date.now();
      index += 1;
      if (!isEvent(frame)) {
        if (frame.type !== 'hello' && frame.type !== 'subscribed') taking.other.push([frame.type, frame.code].filter((part) => part !== undefined).join(' '));
        refused = refusedSubscribe(frame);
        if (refused) break;
        continue;
      }
      received.push(frame);
      seen.add(frame.id as string);
      last = { epoch: typeof frame.epoch === 'number' ? frame.epoch : 0, seq: frame.seq as number };
      taking.seqs.push(frame.seq as number);
    }
    // Abrupt: no closing frame, the way a consumer's network drops. Frames that came after the
    // moment are not taken: the consumer never processed them.
    consumer.socket.terminate();
    await consumer.closed;
    if (refused) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { received, connections, trail };
}
