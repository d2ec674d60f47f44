/**
 * Serves one `GET /stream` (AEP-0003 §3.3) on a Lambda response stream, with the same
 * semantics as a WebSocket subscription: same filter, ceiling and replay, and the same live
 * path: the stream records a subscription that fan-out delivers to (into the stream's inbox,
 * `inbox-store.ts`), handed from replay to live exactly as on the socket.
 *
 * Why this live path: polling the log would cost a query per session per poll and cannot
 * serve a filter that pins no session without scanning the tenant; the fan-out path costs one
 * inbox write per delivery plus the stream's polls, and shares every rule with the socket.
 * Measured on the local stack (BENCHMARKS.md): POST to SSE p50/p95/p99 157/246/286 ms, POST to
 * WebSocket 105/173/213 ms; the difference is the inbox poll interval.
 *
 * The stream ends cleanly before Lambda's maximum duration: a comment saying so, then the
 * end, so EventSource reconnects with Last-Event-ID and loses nothing.
 */
import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { hasScope } from '../../auth/principal.ts';
import { forbidden, notFound, RelayError, unauthenticated, limitExceeded, isStorageUnavailable, unavailable } from '../../errors/relay-error.ts';
import type { HttpResponsePrelude } from '../../gateway/lambda-streaming.ts';
import type { Logger } from '../../observability/logger.ts';
import { sessionEqualityOf } from '../../protocol/attr-match.ts';
import { isSeverity, severityRank } from '../../protocol/levels.ts';
import { bearerToken } from '../../auth/bearer.ts';
import { hashTokenSecret } from '../../auth/token-secret.ts';
import { parseStored } from '../delivery-text.ts';
import { matchingSteps, replaySteps } from '../replay-plan.ts';
import type { RelayRuntime } from '../runtime.ts';
import { handOffToLive, HighWater } from '../subscription-handoff.ts';
import { replayExhaustedComment, sseComment, sseEventMessage } from './sse-format.ts';
import { sseStreamId } from './sse-stream-id.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../tenant-quotas.ts';
import { parseStreamRequest } from './stream-request.ts';
import type { StreamRequest } from './stream-request.ts';
import { SseWriter } from './sse-writer.ts';

/** Opens the HTTP response with its status and headers (HttpResponseStream.from in Lambda). */
export type OpenResponse = (prelude: HttpResponsePrelude) => Writable;

export interface StreamInvocation {
  event: APIGatewayProxyEventV2;
  open: OpenResponse;
  /** Milliseconds left before the function times out. */
  remainingMs: () => number;
}

const SUBSCRIPTION_ID = 'stream';

export async function serveStream(runtime: RelayRuntime, logger: Logger, invocation: StreamInvocation): Promise<void> {
  // When the request arrived: events stored from here on are this stream's to deliver.
  const arrivedAtMs = runtime.now();
  let accepted: AcceptedStream;
  try {
    accepted = await acceptRequest(runtime, invocation.event, arrivedAtMs);
  } catch (error) {
    refuse(invocation, logger, error);
    return;
  }
  await streamEvents(runtime, logger, invocation, accepted);
}

interface AcceptedStream {
  request: StreamRequest;
  arrivedAtMs: number;
  tenant: string;
  /** Digest of the bearer token, so a live stream can re-check it was not revoked. */
  tokenDigest: string;
  streamId?: string;
}

/** Authenticates and validates the request, and for a live stream records its subscription. */
async function acceptRequest(runtime: RelayRuntime, event: APIGatewayProxyEventV2, arrivedAtMs: number): Promise<AcceptedStream> {
  if (event.rawPath !== '/stream') throw notFound();
  if (event.requestContext.http.method.toUpperCase() !== 'GET') throw new RelayError('method-not-allowed', 405, 'GET /stream only');
  const headers = event.headers ?? {};
  const token = bearerToken({
    // Behind CloudFront with origin access control, the viewer's Authorization header is
    // replaced by the signature, so the edge copies it into x-aep-authorization.
    authorization: headers['x-aep-authorization'] ?? headers.authorization,
    accessTokenQuery: event.queryStringParameters?.access_token,
    allowQueryToken: true,
  });
  const tokenDigest = token === undefined ? undefined : hashTokenSecret(token);
  const principal = tokenDigest === undefined ? undefined : await runtime.tenants.resolve(tokenDigest);
  if (principal === undefined || tokenDigest === undefined) throw unauthenticated();
  if (!hasScope(principal, 'consume')) throw forbidden('this token lacks the consume scope');
  const request = parseStreamRequest(event.queryStringParameters ?? {}, headers['last-event-id'], runtime.config.limits.maxFromPositions);
  if (request instanceof RelayError) throw request;
  const tenant = principal.tenant;
  if (!request.live) return { request, arrivedAtMs, tenant, tokenDigest };
  const streamId = sseStreamId(runtime.mintId());
  const quotas = await runtime.quotas.quotasOf(tenant);
  if (!(await runtime.quotas.acquireConnection(tenant, quotas.maxConnections ?? DEFAULT_MAX_CONNECTIONS))) {
    throw limitExceeded(`the tenant's quota of ${quotas.maxConnections ?? DEFAULT_MAX_CONNECTIONS} open connections and streams is reached`);
  }
  await runtime.connections.createConnection(tenant, streamId, principal);
  const recorded = await runtime.connections.addSubscription(
    tenant,
    streamId,
    { subscriptionId: SUBSCRIPTION_ID, filter: JSON.stringify(request.filter), ...(request.ceiling === undefined ? {} : { ceiling: request.ceiling }), ...sessionsOf(request) },
    1,
  );
  if (!recorded) {
    await runtime.connections.removeConnection(tenant, streamId);
    throw limitExceeded('could not record the stream subscription');
  }
  return { request, arrivedAtMs, tenant, tokenDigest, streamId };
}

function sessionsOf(request: StreamRequest): { sessions?: string[] } {
  const sessions = sessionEqualityOf(request.filter);
  return sessions === undefined ? {} : { sessions };
}

/** Refusals are plain JSON responses, written before any stream header (AEP-0003 §3.3). */
function refuse(invocation: StreamInvocation, logger: Logger, error: unknown): void {
  const relayError = error instanceof RelayError ? error : isStorageUnavailable(error) ? unavailable(undefined, error) : undefined;
  if (!(error instanceof RelayError)) logger.error('stream request failed', { error });
  const status = relayError?.status ?? 500;
  const body = relayError?.body() ?? { error: 'internal', detail: 'internal error' };
  const stream = invocation.open({ statusCode: status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
  stream.write(JSON.stringify(body));
  stream.end();
}

async function streamEvents(runtime: RelayRuntime, logger: Logger, invocation: StreamInvocation, accepted: AcceptedStream): Promise<void> {
  const { request, tenant, streamId } = accepted;
  const { sse } = runtime.config;
  const startedAt = runtime.now();
  const stream = invocation.open({
    statusCode: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
  const writer = new SseWriter(stream, runtime.now, sse.flushPaddingBytes);
  try {
    writer.write(sseComment('aep stream open'));
    const highWater = new HighWater();
    if (Array.isArray(request.from)) for (const position of request.from) highWater.raise(position);
    if (request.from !== undefined) {
      const steps = replaySteps(runtime.eventLog, { tenant, from: request.from, matches: request.matches, ...(request.ceiling === undefined ? {} : { ceiling: request.ceiling }) });
      for await (const step of steps) {
        if (!writer.isOpen) return;
        if (step.kind === 'exhausted') {
          writer.write(replayExhaustedComment(step.session, step.earliest));
          continue;
        }
        writeEvent(writer, step.text);
        if (step.position !== undefined) highWater.raise(step.position);
      }
    }
    if (streamId === undefined) {
      writer.end();
      return;
    }
    // Events stored between the request's arrival and its subscription being recorded reached
    // fan-out before the subscription existed: catch up with them from the log. This covers
    // filters that pin sessions; for the others the window is as long as the setup took.
    for (const session of sessionEqualityOf(request.filter) ?? []) {
      for (const step of matchingSteps(await runtime.eventLog.storedSince(tenant, session, accepted.arrivedAtMs), request)) {
        if (highWater.covers(step.position)) continue;
        writeEvent(writer, step.text);
        if (step.position !== undefined) highWater.raise(step.position);
      }
    }
    const delivered = await handOffToLive(runtime.connections, {
      tenant,
      connectionId: streamId,
      subscriptionId: SUBSCRIPTION_ID,
      ceiling: request.ceiling,
      highWater,
      deliver: async (text) => writeEvent(writer, text),
    });
    if (!delivered) return;
    const readInbox = runtime.inbox.reader(tenant, streamId, startedAt);
    const endAt = startedAt + sse.maxDurationMs;
    let validatedAt = runtime.now();
    while (writer.isOpen) {
      if (runtime.now() - validatedAt >= sse.revalidateMs) {
        // A stream has no connection revocation could close, so it re-checks its token.
        if ((await runtime.tenants.resolve(accepted.tokenDigest)) === undefined) {
          writer.end('closing: the token is no longer valid');
          return;
        }
        validatedAt = runtime.now();
      }
      if (invocation.remainingMs() < sse.endMarginMs || runtime.now() >= endAt) {
        // Lambda's maximum duration is near: end cleanly so EventSource reconnects with
        // Last-Event-ID (or from) and resumes without loss.
        writer.end('closing: the stream reached its duration limit; reconnect with Last-Event-ID to resume');
        return;
      }
      for (const item of await readInbox()) {
        if (!deliverLive(writer, item.text, sse.backpressureBytes)) return;
      }
      if (writer.idleMs >= sse.heartbeatMs) writer.write(sseComment('ping'));
      await new Promise((resolve) => setTimeout(resolve, sse.pollMs));
      writer.flushIfIdle();
    }
  } catch (error) {
    logger.error('stream failed', { error, tenant });
    writer.end('closing: internal error; reconnect with Last-Event-ID to resume');
  } finally {
    if (streamId !== undefined) await runtime.connections.removeConnection(tenant, streamId).catch((error: unknown) => logger.error('stream cleanup failed', { error }));
  }
}

function writeEvent(writer: SseWriter, text: string): boolean {
  const event = parseStored(text);
  return event !== undefined && writer.write(sseEventMessage(event, text));
}

/**
 * Backpressure (AEP-0003 §8.4): with too much unsent, debug/info events are dropped; for
 * notice and above the stream is terminated so the consumer resumes exactly.
 */
function deliverLive(writer: SseWriter, text: string, backpressureBytes: number): boolean {
  const event = parseStored(text);
  if (event === undefined) return true;
  if (writer.pendingBytes > backpressureBytes) {
    const severity = isSeverity(event.severity) ? event.severity : 'info';
    if (severityRank(severity) <= severityRank('info')) return true;
    writer.end('closing: the client is not keeping up; reconnect with Last-Event-ID to resume');
    return false;
  }
  return writer.write(sseEventMessage(event, text));
}
