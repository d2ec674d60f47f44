/**
 * Accepting a `GET /stream` request (AEP-0003 §3.3) before any stream header is written:
 * authentication, the consume scope, the subscription the query asks for, the stream's slots
 * (its tenant's share, its tenant's quota, the deployment's pool), and for a live stream its
 * recorded subscription. Every refusal is a RelayError the
 * caller answers as a plain JSON response.
 */
import { FORWARDED_AUTHORIZATION_HEADER } from '../../auth/bearer.ts';
import { hasScope } from '../../auth/principal.ts';
import { forbidden, limitExceeded, notFound, RelayError, unauthenticated, unavailable } from '../../errors/relay-error.ts';
import { sessionEqualityOf } from '../../protocol/attr-match.ts';
import { BEFORE_FIRST_SEQ, comparePositions } from '../../protocol/positions.ts';
import type { Position } from '../../protocol/positions.ts';
import { authenticate, requireAuthentication } from '../connections/authenticate.ts';
import { recordSubscription } from '../subscribe/open-subscription.ts';
import { confirmStillActive } from '../connections/revocation.ts';
import type { SubscriptionSpec } from '../subscribe/open-subscription.ts';
import { releaseStreamSlots, takeStreamSlots } from '../connections/connection-slots.ts';
import type { StreamSlots } from '../connections/connection-slots.ts';
import { readCeilingOf } from '../domain/read-ceiling.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { RefusedTokens } from '../connections/refused-tokens.ts';

/** What accepting a stream uses: authentication, the stream slots, and the subscription it records. */
export type AcceptStreamDeps = Pick<RelayPorts, 'config' | 'connections' | 'mintId' | 'now' | 'poster' | 'quotas' | 'sessionOrder' | 'subscriptions' | 'tokens'> & { refusedTokens: RefusedTokens };
import { sseStreamId } from '../domain/sse-stream-id.ts';
import { parseStreamRequest } from './stream-request.ts';

/** The `GET /stream` request, as the entry point decoded it from its platform's event. */
export interface StreamHttpRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
}

/** Slots free as connections close and streams end (streams within minutes); a few seconds is a fair first wait. */
export const STREAM_RETRY_AFTER_SECONDS = 10;

/** A stream's one subscription id (a stream carries exactly one subscription). */
const SUBSCRIPTION_ID = 'stream';

export interface AcceptedStream {
  subscription: SubscriptionSpec;
  /** `live=0`: replay, then end the stream; nothing was recorded. */
  live: boolean;
  /** When the request arrived: events stored from then on are this stream's to deliver. */
  arrivedAtMs: number;
  /** Digest of the bearer token, so a live stream can re-check it was not revoked. */
  tokenDigest: string;
  /** When the token expires, if it does: a live stream ends then. */
  expiresAtMs?: number;
  /** The slots the stream holds (live or replay-only), renewed while it runs and released at its end. */
  slots: StreamSlots;
}

/** Authenticates and validates the request, and for a live stream takes a slot and records its subscription. */
export async function acceptStream(runtime: AcceptStreamDeps, http: StreamHttpRequest, arrivedAtMs: number): Promise<AcceptedStream> {
  if (http.path !== '/stream') throw notFound();
  if (http.method.toUpperCase() !== 'GET') throw new RelayError('method-not-allowed', 405, 'GET /stream only');
  const { headers } = http;
  const authentication = requireAuthentication(await authenticate(runtime, {
    // Behind CloudFront with origin access control, Authorization is CloudFront's SigV4
    // signature; the edge copies the viewer's header into x-aep-authorization first
    // (infra/constructs/edge-functions.ts). An EventSource sends neither: its token is the query.
    forwardedAuthorization: headers[FORWARDED_AUTHORIZATION_HEADER],
    authorization: headers.authorization,
    accessTokenQuery: http.query.access_token,
    allowQueryToken: true,
  }));
  const { principal, tokenDigest } = authentication;
  if (!hasScope(principal, 'consume')) throw forbidden('this token lacks the consume scope');
  const request = parseStreamRequest(http.query, headers['last-event-id'], runtime.config.limits.maxFromPositions);
  if (request instanceof RelayError) throw request;
  const tenant = principal.tenant;
  const subscription: SubscriptionSpec = {
    tenant,
    connectionId: sseStreamId(runtime.mintId()),
    subscriptionId: SUBSCRIPTION_ID,
    filter: request.filter,
    matches: request.matches,
    ceiling: readCeilingOf(request.ceiling, principal),
    from: request.from ?? (request.live ? await liveStartOf(runtime, tenant, sessionEqualityOf(request.filter)) : undefined),
  };
  const expiry = principal.expiresAtMs === undefined ? {} : { expiresAtMs: principal.expiresAtMs };
  const { slotLeaseMs, maxLiveStreams, maxStreamsPerTenant } = runtime.config.sse;
  // Every stream takes its slots, replay-only ones too: each holds a stream function instance.
  const taken = await takeStreamSlots(runtime, tenant, subscription.connectionId, { maxLiveStreams, maxStreamsPerTenant, slotLeaseMs }, (shards) => Math.floor(Math.random() * shards));
  if ('refused' in taken) {
    // The deployment's cap, not the tenant's: 503, before Lambda's own bare 429 throttle. The
    // tenant's share and quota are the tenant's own limits: 429.
    if (taken.refused === 'pool') throw unavailable(taken.detail, undefined, STREAM_RETRY_AFTER_SECONDS);
    throw limitExceeded(taken.detail, STREAM_RETRY_AFTER_SECONDS);
  }
  if (!request.live) return { subscription, live: false, arrivedAtMs, tokenDigest, slots: taken, ...expiry };
  await runtime.connections.createConnection(tenant, subscription.connectionId, principal);
  if (!(await recordSubscription(runtime, subscription, 1))) {
    await runtime.connections.removeConnection(tenant, subscription.connectionId);
    await releaseStreamSlots(runtime, taken, true);
    throw limitExceeded('could not record the stream subscription');
  }
  // Recorded first, checked second: a revoke that listed the token's streams before this one
  // was recorded is seen here (`revocation.ts`).
  if (!(await confirmStillActive(runtime, principal))) {
    await runtime.connections.removeConnection(tenant, subscription.connectionId);
    await releaseStreamSlots(runtime, taken, true);
    throw unauthenticated();
  }
  return { subscription, live: true, arrivedAtMs, tokenDigest, slots: taken, ...expiry };
}

/**
 * Where a live stream with no `from` starts, for the sessions its filter pins: after their
 * release points as this request reads them, which is before its subscription is recorded. So an
 * event released between the two (posted while the stream was opening) is replayed rather than
 * missed, with no clock involved. With several emitters under a name, the lowest of their
 * release points: the others' events between it and theirs come again (a resume position names
 * no emitter, AEP-0001 §5.2). A filter that pins no session starts at its recording.
 */
async function liveStartOf(runtime: Pick<RelayPorts, 'sessionOrder'>, tenant: string, sessions: readonly string[] | undefined): Promise<Position[] | undefined> {
  if (sessions === undefined || sessions.length === 0) return undefined;
  return Promise.all(
    sessions.map(async (session): Promise<Position> => {
      const points = [...(await runtime.sessionOrder.releasedPoints(tenant, session)).values()];
      const lowest = points.sort(comparePositions)[0];
      return lowest === undefined ? { session, epoch: 0, seq: BEFORE_FIRST_SEQ } : { session, epoch: lowest.epoch, seq: lowest.seq };
    }),
  );
}
