/**
 * Serves one `GET /stream` (AEP-0003 §3.3) on a Lambda response stream, with the same
 * semantics as a WebSocket subscription: same filter, ceiling and replay, and the same live
 * path: the stream records a subscription that fan-out delivers to (into the stream's inbox,
 * `ports/inbox.ts`), handed from replay to live exactly as on the socket.
 *
 * Why this live path: polling the log would cost a query per session per poll and cannot
 * serve a filter that pins no session without scanning the tenant; the fan-out path costs one
 * inbox write per delivery plus the stream's polls, and shares every rule with the socket.
 * POST to SSE delivery is slower than POST to WebSocket by about the inbox poll interval
 * (BENCHMARKS.md, latency).
 *
 * The end of the replay is marked with the comment `: replay-complete`.
 *
 * The stream ends cleanly before Lambda's maximum duration: a comment saying so, then the
 * end, so EventSource reconnects with Last-Event-ID and loses nothing.
 */
import type { Writable } from 'node:stream';
import { httpRefusalOf } from '../../errors/relay-error.ts';
import type { Logger } from '../../observability/logger.ts';
import { backpressureAction } from '../domain/backpressure.ts';
import { keepStreamSlots, releaseStreamSlots, renewStreamSlots } from '../connections/connection-slots.ts';
import { parseStored } from '../domain/delivery-text.ts';
import { goLive, OUT_OF_TIME, replayInto } from '../subscribe/open-subscription.ts';
import type { SubscriptionOutput } from '../subscribe/open-subscription.ts';
import type { AcceptStreamDeps } from './accept-stream.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';

/** What serving a stream uses: accepting it, replay and hand-off, the inbox it polls, and its counts. */
export type StreamDeps = AcceptStreamDeps & Pick<RelayPorts, 'eventLog' | 'inbox' | 'metrics' | 'parking'>;
import { acceptStream } from './accept-stream.ts';
import type { AcceptedStream, StreamHttpRequest } from './accept-stream.ts';
import { replayExhaustedComment, sseComment, sseEventMessage } from './sse-format.ts';
import { SseWriter } from './sse-writer.ts';
import { PollBackoff, waitBeforeNextRead } from './poll-backoff.ts';

export type { StreamHttpRequest } from './accept-stream.ts';

/** The status and headers a response opens with, before its body. */
export interface ResponsePrelude {
  statusCode: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

/** Opens the HTTP response with its status and headers (HttpResponseStream.from in Lambda). */
export type OpenResponse = (prelude: ResponsePrelude) => Writable;

export interface StreamInvocation {
  request: StreamHttpRequest;
  open: OpenResponse;
  /** Milliseconds left before the function times out. */
  remainingMs: () => number;
}

/**
 * Marks the end of the replay: before a `live=0` stream ends, and at the replay-to-live handoff
 * of a live one (after the events parked during the replay), whether or not `from` asked for
 * any. The protocol's official TypeScript client waits for this comment.
 */
const REPLAY_COMPLETE = sseComment('replay-complete');

export async function serveStream(runtime: StreamDeps, logger: Logger, invocation: StreamInvocation): Promise<void> {
  let accepted: AcceptedStream;
  try {
    accepted = await acceptStream(runtime, invocation.request, runtime.now());
  } catch (error) {
    refuseStream(invocation, logger, error);
    return;
  }
  if (accepted.live) runtime.metrics.count('StreamsOpened', accepted.subscription.tenant);
  await streamEvents(runtime, logger, invocation, accepted);
}

/** Refusals are plain JSON responses, written before any stream header (AEP-0003 §3.3). */
export function refuseStream(invocation: StreamInvocation, logger: Logger, error: unknown): void {
  const answer = httpRefusalOf(error);
  if (answer.unexpected) logger.error('stream request failed', { error });
  const stream = invocation.open({ statusCode: answer.status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...answer.headers } });
  stream.write(JSON.stringify(answer.body));
  stream.end();
}

async function streamEvents(runtime: StreamDeps, logger: Logger, invocation: StreamInvocation, accepted: AcceptedStream): Promise<void> {
  const { subscription, live } = accepted;
  const { tenant, connectionId: streamId } = subscription;
  const { sse } = runtime.config;
  const startedAt = runtime.now();
  const stream = invocation.open({
    statusCode: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
  const writer = new SseWriter(stream, runtime.now, sse.flushPaddingBytes);
  // Each write answers whether the client is still there (an unreadable stored text is skipped).
  const output: SubscriptionOutput = {
    event: async (text) => {
      writeEvent(writer, text);
      return writer.isOpen;
    },
    exhausted: async (session, earliest) => writer.write(replayExhaustedComment(session, earliest)),
  };
  try {
    writer.write(sseComment('aep stream open'));
    // A stream's replay has the stream's whole life (15 min): it sets no deadline, so its slots
    // are renewed while it runs too, or a long replay would be reclaimed as a lost stream.
    const renewal = keepStreamSlots(runtime, accepted.slots, sse.slotLeaseMs, (error) => logger.warn('renewing a replaying stream slot failed', { error }));
    const delivered = await replayInto(runtime, subscription, output).finally(renewal.stop);
    if (renewal.lost()) {
      writer.end('closing: the stream lost its connection slot; reconnect with Last-Event-ID to resume');
      return;
    }
    if (delivered === undefined || delivered === OUT_OF_TIME) return;
    if (!live) {
      writer.write(REPLAY_COMPLETE);
      writer.end();
      return;
    }
    if ((await goLive(runtime, subscription, delivered, output)) !== true) return;
    writer.write(REPLAY_COMPLETE);
    const readInbox = runtime.inbox.reader(tenant, streamId);
    // An idle stream reads its inbox less and less often, down to `idlePollMs` (poll-backoff.ts).
    const backoff = new PollBackoff(sse);
    const endAt = startedAt + sse.maxDurationMs;
    let validatedAt = runtime.now();
    let renewedAt = runtime.now();
    let deliveredAt = runtime.now();
    while (writer.isOpen) {
      if (runtime.now() - validatedAt >= sse.revalidateMs) {
        // A stream has no connection revocation could close, so it re-checks its token.
        if ((await runtime.tokens.resolve(accepted.tokenDigest)) === undefined) {
          writer.end('closing: the token is no longer valid');
          return;
        }
        validatedAt = runtime.now();
      }
      if (runtime.now() - renewedAt >= sse.slotLeaseMs / 3) {
        // The stream's connection slot is a lease (connection-slots.ts), renewed while it runs.
        if (!(await renewStreamSlots(runtime, accepted.slots, sse.slotLeaseMs))) {
          writer.end('closing: the stream lost its connection slot; reconnect with Last-Event-ID to resume');
          return;
        }
        renewedAt = runtime.now();
      }
      if (invocation.remainingMs() < sse.endMarginMs || runtime.now() >= endAt) {
        // Lambda's maximum duration is near: end cleanly so EventSource reconnects with
        // Last-Event-ID (or from) and resumes without loss.
        writer.end('closing: the stream reached its duration limit; reconnect with Last-Event-ID to resume');
        return;
      }
      if (accepted.expiresAtMs !== undefined && runtime.now() >= accepted.expiresAtMs) {
        writer.end('closing: token-expired');
        return;
      }
      const delivered = await readInbox();
      for (const item of delivered) {
        if (item.closing !== undefined) {
          // Revocation or a disabled tenant (`revocation.ts`): end now, saying why.
          writer.end(`closing: ${item.closing}`);
          return;
        }
        const outcome = deliverLive(writer, item.text, sse.backpressureBytes);
        if (outcome === 'backpressure') runtime.metrics.count('BackpressureDisconnects', tenant);
        if (outcome !== 'written') return;
      }
      if (delivered.length > 0) deliveredAt = runtime.now();
      else if (sse.idleEndMs > 0 && runtime.now() - deliveredAt >= sse.idleEndMs) {
        // Lambda may never say the client left (a closed tab would keep this loop polling): a stream
        // with nothing to deliver ends, and a client that is still there reconnects.
        writer.end(`closing: nothing to deliver for ${Math.round(sse.idleEndMs / 1000)} s; reconnect with Last-Event-ID to resume`);
        return;
      }
      if (writer.idleMs >= sse.heartbeatMs) writer.write(sseComment('ping'));
      const now = runtime.now();
      const wait = waitBeforeNextRead(backoff.afterRead(delivered.length), [
        sse.heartbeatMs - writer.idleMs,
        sse.slotLeaseMs / 3 - (now - renewedAt),
        sse.revalidateMs - (now - validatedAt),
        endAt - now,
        invocation.remainingMs() - sse.endMarginMs,
        ...(accepted.expiresAtMs === undefined ? [] : [accepted.expiresAtMs - now]),
        ...(sse.idleEndMs > 0 ? [deliveredAt + sse.idleEndMs - now] : []),
      ]);
      // A client that leaves ends the wait at once, not at the next poll or heartbeat.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, wait))), writer.closed]);
      clearTimeout(timer);
      writer.flushIfIdle();
    }
  } catch (error) {
    logger.error('stream failed', { error, tenant });
    writer.end('closing: internal error; reconnect with Last-Event-ID to resume');
  } finally {
    if (live) {
      runtime.metrics.count('StreamsClosed', tenant);
      await runtime.connections.removeConnection(tenant, streamId).catch((error: unknown) => logger.error('stream cleanup failed', { error }));
    }
    // A live stream's connection removal gave its tenant slot back; the share and the pool slot go here.
    await releaseStreamSlots(runtime, accepted.slots, live).catch((error: unknown) => logger.error('stream cleanup failed', { error }));
  }
}

function writeEvent(writer: SseWriter, text: string): boolean {
  const event = parseStored(text);
  return event !== undefined && writer.write(sseEventMessage(event, text));
}

/**
 * Backpressure (AEP-0003 §8.4, `backpressure.ts`): with too much unsent, an event the
 * decision drops is skipped (counted as written); otherwise the stream ends so the consumer
 * resumes exactly. `gone`: the client left.
 */
function deliverLive(writer: SseWriter, text: string, backpressureBytes: number): 'written' | 'backpressure' | 'gone' {
  const event = parseStored(text);
  if (event === undefined) return 'written';
  if (writer.pendingBytes > backpressureBytes) {
    if (backpressureAction(event.severity) === 'drop') return 'written';
    writer.end('closing: the client is not keeping up; reconnect with Last-Event-ID to resume');
    return 'backpressure';
  }
  return writer.write(sseEventMessage(event, text)) ? 'written' : 'gone';
}
