/**
 * The relay's one refusal family. Each refusal carries the spec's word for what went wrong
 * (`code`), the HTTP status where the binding is HTTP (an SSE stream is refused with the same
 * status and body before it starts), whether it ends a WebSocket connection, and an optional
 * detail that is safe to show the client. Each binding maps it in one place: HTTP and SSE in
 * `httpRefusalOf`, the WebSocket binding in `relay/socket/socket-refusals.ts`. Anything that is
 * not a RelayError becomes a bare 500 (or a storage failure, 503 `unavailable`).
 */

/**
 * Every code the spec defines for a refusal, with the relay's HTTP status for it and whether the
 * WebSocket connection ends after its `error` frame (only refusals of the connection itself do:
 * a refused subscribe, event or command never disturbs the connection, AEP-0003 §6.5).
 */
export const SPEC_REFUSALS = {
  /** AEP-0003 §8.1: no usable credentials. */
  unauthenticated: { status: 401, endsConnection: true },
  /** AEP-0003 §8 and AEP-0004 §4.2: this token or connection may not do this. */
  unauthorized: { status: 403, endsConnection: false },
  /** AEP-0003 §3.2 and §4: no offered version is supported. */
  'version-unsupported': { status: 426, endsConnection: true },
  /** AEP-0003 §3.5.1: the first frame was not `hello`. */
  'hello-required': { status: 400, endsConnection: true },
  /** AEP-0003 §3.2: an event fails envelope validation. */
  'invalid-event': { status: 400, endsConnection: false },
  /** AEP-0003 §6.5: a malformed subscribe or an illegal filter key. */
  'invalid-filter': { status: 400, endsConnection: false },
  /** AEP-0003 §6.5: a filter dialect the endpoint did not advertise. */
  'unknown-dialect': { status: 400, endsConnection: false },
  /** AEP-0003 §6.5: an endpoint resource limit (a quota, a rate, a size). */
  'limit-exceeded': { status: 429, endsConnection: false },
  /** AEP-0004 §4.2: the target does not accept this command. */
  unsupported: { status: 409, endsConnection: false },
  /** AEP-0004 §4.2: more than one live claimant of the session. */
  ambiguous: { status: 409, endsConnection: false },
  /** AEP-0004 §4.2: no connected emitter owns the session. */
  'no-route': { status: 404, endsConnection: false },
} as const;
export type SpecRefusalCode = keyof typeof SPEC_REFUSALS;

/**
 * The relay's own codes beside the spec's: malformed frames and hellos, sizes, media types,
 * storage, routes, queries and the admin API's conflicts.
 */
export const RELAY_REFUSALS = {
  'invalid-hello': { status: 400, endsConnection: true },
  'invalid-frame': { status: 400, endsConnection: false },
  'payload-too-large': { status: 413, endsConnection: false },
  'too-many-events': { status: 413, endsConnection: false },
  'event-too-large': { status: 413, endsConnection: false },
  'unsupported-media-type': { status: 415, endsConnection: false },
  unavailable: { status: 503, endsConnection: false },
  'not-found': { status: 404, endsConnection: false },
  'method-not-allowed': { status: 405, endsConnection: false },
  'invalid-query': { status: 400, endsConnection: false },
  'invalid-cursor': { status: 400, endsConnection: false },
  'invalid-request': { status: 400, endsConnection: false },
  'tenant-exists': { status: 409, endsConnection: false },
  'token-inactive': { status: 409, endsConnection: false },
  'operator-lockout': { status: 409, endsConnection: false },
} as const;
export type RefusalCode = SpecRefusalCode | keyof typeof RELAY_REFUSALS;
const REFUSALS: Record<RefusalCode, { status: number; endsConnection: boolean }> = { ...SPEC_REFUSALS, ...RELAY_REFUSALS };

export interface RefusalOptions {
  cause?: unknown;
  /** For a refusal worth retrying (429, 503): how long to wait, sent as Retry-After. */
  retryAfterSeconds?: number;
  /** Overrides the code's own: a refusal of a `hello` ends the connection whatever its code. */
  endsConnection?: boolean;
}

export class RelayError extends Error {
  /** Whether the WebSocket connection ends after this refusal's `error` frame. */
  readonly endsConnection: boolean;
  /** For a refusal worth retrying (429, 503): how long to wait, sent as Retry-After. */
  readonly retryAfterSeconds?: number;

  /**
   * `code` is one of the family's (`RefusalCode`) for the relay's own refusals; clients that
   * rebuild a refusal they were sent (the CLI) pass the code and status they received.
   */
  constructor(
    readonly code: string,
    readonly status: number,
    readonly detail?: string,
    readonly extra?: Record<string, unknown>,
    options?: RefusalOptions,
  ) {
    super(detail === undefined ? code : `${code}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RelayError';
    this.endsConnection = options?.endsConnection ?? (REFUSALS as Record<string, { endsConnection: boolean }>)[code]?.endsConnection ?? false;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** Response headers the error adds to its body (Retry-After). */
  headers(): Record<string, string> {
    return this.retryAfterSeconds === undefined ? {} : { 'retry-after': String(this.retryAfterSeconds) };
  }

  /** The JSON body a client receives. */
  body(): Record<string, unknown> {
    return { error: this.code, ...(this.detail === undefined ? {} : { detail: this.detail }), ...this.extra };
  }
}

/** A refusal of the family, its status from the code's own. */
export const refusal = (code: RefusalCode, detail?: string, extra?: Record<string, unknown>, options?: RefusalOptions) => new RelayError(code, REFUSALS[code].status, detail, extra, options);

/**
 * How the HTTP binding (and an SSE stream, before it starts) answers whatever a request threw:
 * a refusal its status, body and headers; a storage failure 503 `unavailable`; anything else a
 * bare 500 that reveals nothing (`logged`: the caller logs the cause).
 */
export function httpRefusalOf(error: unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string>; unexpected: boolean } {
  const relayError = error instanceof RelayError ? error : isStorageUnavailable(error) ? unavailable(undefined, error) : undefined;
  if (relayError === undefined) return { status: 500, body: { error: 'internal', detail: 'internal error' }, headers: {}, unexpected: true };
  return { status: relayError.status, body: relayError.body(), headers: relayError.headers(), unexpected: !(error instanceof RelayError) };
}

/** 401: no usable credentials (AEP-0003 §8.1). */
export const unauthenticated = (detail = 'a valid bearer token is required') => refusal('unauthenticated', detail);
/** 403: authenticated, but this token may not do this (scope, agent binding, control policy). */
export const forbidden = (detail: string, options?: RefusalOptions) => refusal('unauthorized', detail, undefined, options);
/** 426: the request names no supported protocol version (AEP-0003 §3.2). */
export const versionUnsupported = (versions: readonly string[], detail = `send the AEP-Version header with one of: ${versions.join(', ')}`) =>
  refusal('version-unsupported', detail, { versions: [...versions] });
/** 400: an event fails envelope validation (AEP-0003 §3.2). */
export const invalidEvent = (detail: string, extra?: Record<string, unknown>) => refusal('invalid-event', detail, extra);
/** 413: the body or batch is over a limit. */
export const payloadTooLarge = (code: 'payload-too-large' | 'too-many-events' | 'event-too-large', detail: string) => refusal(code, detail);
/** 415: a content type the binding does not take. */
export const unsupportedMediaType = (detail: string) => refusal('unsupported-media-type', detail);
/** 429: a tenant quota was hit; worth retrying after `retryAfterSeconds` (rate windows are one second). */
export const limitExceeded = (detail: string, retryAfterSeconds = 1) => refusal('limit-exceeded', detail, undefined, { retryAfterSeconds });
/** 503: storage is unavailable after retries (or the deployment is at capacity); the client retries, with the same event ids. */
export const unavailable = (detail = 'the event store is unavailable, retry with the same event ids', cause?: unknown, retryAfterSeconds = 1) =>
  refusal('unavailable', detail, undefined, { cause, retryAfterSeconds });
/** 404: no such route. */
export const notFound = () => refusal('not-found', 'no such route');
/** 400 for a malformed request; `limit-exceeded` here is a request's own size limit (a long identifier, a page), not a quota worth retrying. */
export const badRequest = (code: 'invalid-event' | 'invalid-filter' | 'invalid-query' | 'invalid-cursor' | 'limit-exceeded', detail: string) => new RelayError(code, 400, detail);

/** The WebSocket binding's own refusals (AEP-0003 §3.5 and §4, AEP-0004 §4.2). */
export const helloRequired = (detail: string) => refusal('hello-required', detail);
export const invalidHello = (detail: string) => refusal('invalid-hello', detail);
export const invalidFrame = (detail: string) => refusal('invalid-frame', detail);
export const invalidFilter = (detail: string) => refusal('invalid-filter', detail);
export const commandRefused = (code: 'no-route' | 'ambiguous' | 'unsupported', detail: string) => refusal(code, detail);

/** Error names the AWS SDK gives throttling (the SDK's own retry classification). */
const THROTTLING_ERRORS = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'LimitExceededException', 'TooManyRequestsException']);
/** Network failures reaching DynamoDB (no answer at all). */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * True for what an AWS SDK call throws when storage stays throttled or failing after the SDK's
 * retries (throttling, 5xx, timeouts, no connection): the request could not be served now and
 * may be retried, so it is answered 503 `unavailable`, never a bare 500.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { $metadata, $fault, code } = error as Error & { $metadata?: { httpStatusCode?: number }; $fault?: string; code?: string };
  const status = $metadata?.httpStatusCode;
  return (
    THROTTLING_ERRORS.has(error.name) ||
    $fault === 'server' ||
    (status !== undefined && (status === 429 || status >= 500)) ||
    error.name === 'TimeoutError' ||
    (code !== undefined && NETWORK_ERRORS.has(code))
  );
}
