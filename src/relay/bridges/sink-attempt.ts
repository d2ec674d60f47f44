/**
 * One attempt at delivering some of a tenant's events to one sink, shared by the live lane
 * (a short budget for the whole batch) and the retry lane (the full request timeout): the
 * sink's requests in stream order, each sent once. After the first request that fails in a
 * way a retry may change, the rest are not tried (they would most likely fail the same way,
 * and spend the budget); they wait in the retry lane with it.
 */
import type { BridgeSinksPort, SinkSecrets, StoredSink } from './bridge-sinks-port.ts';
import type { Clock } from '../ports/clock.ts';
import type { SecretSealer } from '../ports/secret-sealer.ts';
import type { SinkTransport } from './sink-transport-port.ts';
import { planSinkRequests } from './sink-requests.ts';
import type { OutboundEvent } from './sink-requests.ts';
import { sendOnce } from './send-once.ts';
import { SIGNATURE_HEADER, signatureHeader } from './webhook-signature.ts';

export interface AttemptDeps {
  sinks: BridgeSinksPort;
  sealer: SecretSealer;
  transport: SinkTransport;
  now: Clock;
}

/** Events a sink did not take, and why. */
export interface Undelivered {
  events: OutboundEvent[];
  reason: string;
}

export interface SinkAttempt {
  /** Requests sent (attempts made). */
  requests: number;
  delivered: number;
  /** Not accepted, worth another attempt (timeouts, 408, 429, 5xx, unreachable, not tried). */
  retryable: Undelivered[];
  /** Refused for good (another 4xx, a disallowed address, too large to send): dead-lettered at once. */
  refused: Undelivered[];
  /** True when a request was sent and failed retryably: the sink looks unwell. */
  failedRetryably: boolean;
}

export interface AttemptTiming {
  /** Longest wait for one answer. */
  timeoutMs: number;
  /** No request is started, or waited for, past this time (the live budget). */
  deadlineMs?: number;
  /** Set when no request is to be sent at all (the sink's circuit is open): the reason they wait. */
  skipReason?: string;
}

export async function attemptSink(deps: AttemptDeps, tenant: string, sink: StoredSink, events: readonly OutboundEvent[], timing: AttemptTiming): Promise<SinkAttempt> {
  const attempt: SinkAttempt = { requests: 0, delivered: 0, retryable: [], refused: [], failedRetryably: false };
  const plan = planSinkRequests(sink.settings, events);
  for (const { event, reason } of plan.unsendable) attempt.refused.push({ events: [event], reason });
  if (plan.requests.length === 0) return attempt;
  if (timing.skipReason !== undefined) {
    for (const request of plan.requests) attempt.retryable.push({ events: request.events, reason: timing.skipReason });
    return attempt;
  }
  const secrets = await openSecrets(deps.sealer, tenant, sink);
  const headersFor = (body: string): Record<string, string> => {
    if (secrets.signingSecret !== undefined) return { [SIGNATURE_HEADER]: signatureHeader(secrets.signingSecret, body, deps.now()) };
    return { ...secrets.headers };
  };
  for (const request of plan.requests) {
    const left = timing.deadlineMs === undefined ? timing.timeoutMs : Math.min(timing.timeoutMs, timing.deadlineMs - deps.now());
    if (attempt.failedRetryably || left <= 0) {
      attempt.retryable.push({ events: request.events, reason: attempt.failedRetryably ? 'not tried: an earlier request to the sink failed' : 'not tried within the live budget' });
      continue;
    }
    const result = await sendOnce(request, { transport: deps.transport, headersFor }, left);
    attempt.requests += 1;
    if (result.ok) {
      attempt.delivered += request.events.length;
      continue;
    }
    attempt.delivered += request.events.length - result.undelivered.length;
    if (result.retryable) {
      attempt.failedRetryably = true;
      attempt.retryable.push({ events: result.undelivered, reason: result.reason });
    } else {
      attempt.refused.push({ events: result.undelivered, reason: result.reason });
    }
  }
  return attempt;
}

async function openSecrets(sealer: SecretSealer, tenant: string, sink: StoredSink): Promise<SinkSecrets> {
  if (sink.sealedSecrets === undefined) return {};
  return JSON.parse(await sealer.open(sink.sealedSecrets, { tenant, sink: sink.settings.name })) as SinkSecrets;
}
