/**
 * The relay's one error family. Each error carries the spec's word for what went wrong
 * (`code`), the HTTP status where the binding is HTTP, and an optional detail that is safe
 * to show the client. Anything that is not a RelayError becomes a bare 500.
 */
export class RelayError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    readonly detail?: string,
    readonly extra?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(detail === undefined ? code : `${code}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RelayError';
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** For a refusal worth retrying (429, 503): how long to wait, sent as Retry-After. */
  readonly retryAfterSeconds?: number;

  /** Response headers the error adds to its body (Retry-After). */
  headers(): Record<string, string> {
    return this.retryAfterSeconds === undefined ? {} : { 'retry-after': String(this.retryAfterSeconds) };
  }

  /** The JSON body a client receives. */
  body(): Record<string, unknown> {
    return { error: this.code, ...(this.detail === undefined ? {} : { detail: this.detail }), ...this.extra };
  }
}

/** 401: no usable credentials (AEP-0003 §8.1). */
export const unauthenticated = (detail = 'a valid bearer token is required') => new RelayError('unauthenticated', 401, detail);
/** 403: authenticated, but this token may not do this (scope, agent binding, control policy). */
export const forbidden = (detail: string) => new RelayError('unauthorized', 403, detail);
/** 426: the request names no supported protocol version (AEP-0003 §3.2). */
export const versionUnsupported = (versions: readonly string[]) =>
  new RelayError('version-unsupported', 426, `send the AEP-Version header with one of: ${versions.join(', ')}`, { versions: [...versions] });
/** 400: an event fails envelope validation (AEP-0003 §3.2). */
export const invalidEvent = (detail: string, extra?: Record<string, unknown>) => new RelayError('invalid-event', 400, detail, extra);
/** 413: the body or batch is over a limit. */
export const payloadTooLarge = (code: 'payload-too-large' | 'too-many-events' | 'event-too-large', detail: string) => new RelayError(code, 413, detail);
/** 415: a content type the binding does not take. */
export const unsupportedMediaType = (detail: string) => new RelayError('unsupported-media-type', 415, detail);
/** 429: a tenant quota was hit; worth retrying after `retryAfterSeconds` (rate windows are one second). */
export const limitExceeded = (detail: string, retryAfterSeconds = 1) => new RelayError('limit-exceeded', 429, detail, undefined, { retryAfterSeconds });
/** 503: storage is unavailable after retries (or the deployment is at capacity); the client retries, with the same event ids. */
export const unavailable = (detail = 'the event store is unavailable, retry with the same event ids', cause?: unknown, retryAfterSeconds = 1) =>
  new RelayError('unavailable', 503, detail, undefined, { cause, retryAfterSeconds });
export const notFound = () => new RelayError('not-found', 404, 'no such route');
export const badRequest = (code: string, detail: string) => new RelayError(code, 400, detail);

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
