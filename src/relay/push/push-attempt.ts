/**
 * One attempt at sending one subscription its notifications, in stream order, shared by the
 * live lane (the batch's budget) and the retry lane (the full request timeout), the way
 * `bridges/sink-attempt.ts` treats a sink: each message sent once; after one fails in a way a
 * retry may change, the rest are not tried and wait in the retry lane with it. A push service
 * answering 404 or 410 ends the subscription: it is removed and nothing more is sent to it.
 */
import type { AepEvent } from '../../protocol/event.ts';
import type { Clock } from '../ports/clock.ts';
import type { RelayMetrics } from '../ports/metrics.ts';
import type { OutboundEvent } from '../bridges/sink-requests.ts';
import { messageFor } from './attention-notification.ts';
import type { PushSubscriptionRecord } from './push-subscription.ts';
import type { PushSubscriptionsPort } from './push-subscriptions-port.ts';
import type { PushTransport } from './push-transport-port.ts';

export interface PushAttemptDeps {
  subscriptions: PushSubscriptionsPort;
  transport: PushTransport;
  metrics: RelayMetrics;
  now: Clock;
  /** The console's URL notifications open. */
  consoleUrl: string;
}

export interface PushAttempt {
  sent: number;
  /** Not accepted, worth another attempt (in order). */
  retryable: OutboundEvent[];
  reason?: string;
  /** Refused for good (a 4xx other than 404/408/410/429): dropped, a notification has no dead letter. */
  dropped: number;
  /** The push service said the subscription is gone; it was removed. */
  gone: boolean;
  /** A message was sent and failed retryably: the endpoint looks unwell. */
  failedRetryably: boolean;
}

export interface PushTiming {
  timeoutMs: number;
  /** No message is started, or waited for, past this time (the live budget). */
  deadlineMs?: number;
  /** Set when nothing is to be sent now (the subscription's circuit is open). */
  skipReason?: string;
}

export async function attemptPush(deps: PushAttemptDeps, tenant: string, subscription: PushSubscriptionRecord, events: readonly OutboundEvent[], timing: PushTiming): Promise<PushAttempt> {
  const attempt: PushAttempt = { sent: 0, retryable: [], dropped: 0, gone: false, failedRetryably: false };
  if (timing.skipReason !== undefined) return { ...attempt, retryable: [...events], reason: timing.skipReason };
  for (const outbound of events) {
    const left = timing.deadlineMs === undefined ? timing.timeoutMs : Math.min(timing.timeoutMs, timing.deadlineMs - deps.now());
    if (attempt.failedRetryably || left <= 0) {
      attempt.retryable.push(outbound);
      attempt.reason ??= 'not tried within the live budget';
      continue;
    }
    const message = messageFor(outbound.event as AepEvent, subscription.maxCapture, deps.consoleUrl, deps.now());
    if (message === undefined) continue;
    const outcome = await deps.transport.send(
      { subscription, payload: JSON.stringify(message.notification), topic: message.topic, urgency: message.urgency, ttlSeconds: message.ttlSeconds },
      left,
    );
    if (outcome.ok) {
      attempt.sent += 1;
      deps.metrics.count('PushesSent', tenant);
      continue;
    }
    deps.metrics.count('PushesFailed', tenant);
    if (outcome.gone === true) {
      // RFC 8030 §7.3: the subscription expired or was unsubscribed; it never comes back.
      if (await deps.subscriptions.remove(tenant, subscription.id)) deps.metrics.count('PushSubscriptionsRemoved', tenant);
      return { ...attempt, retryable: [], gone: true, reason: outcome.reason };
    }
    if (outcome.retryable) {
      attempt.failedRetryably = true;
      attempt.reason = outcome.reason;
      attempt.retryable.push(outbound);
    } else {
      attempt.dropped += 1;
    }
  }
  return attempt;
}
