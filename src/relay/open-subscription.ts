/**
 * Opening a subscription, for every consuming binding (AEP-0003 §5-§7): record it, replay
 * what its `from` asks for, then hand it from replay to live. The WebSocket binding and SSE
 * run these same steps; they differ only in how an event or a replay-exhausted notice is
 * written (`SubscriptionOutput`) and in when they record (the socket answers `subscribed`
 * after recording; a stream records before its response opens, to refuse with a status).
 *
 * The subscription is recorded (state `replaying`) before its replay is read, so an event
 * written in between is parked rather than missed (`subscription-handoff.ts`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { sessionEqualityOf, typeSegmentsOf } from '../protocol/attr-match.ts';
import type { EventMatcher, Filter } from '../protocol/attr-match.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { Position } from '../protocol/positions.ts';
import type { RelayRuntime } from './runtime.ts';
import { replaySteps } from './replay-plan.ts';
import { parseStored } from './delivery-text.ts';
import type { ParkedEvent } from './domain/subscription.ts';
import { DeliveredPositions, handOffToLive } from './subscription-handoff.ts';

export interface SubscriptionSpec {
  tenant: string;
  /** The WebSocket connection id, or the SSE stream's id. */
  connectionId: string;
  subscriptionId: string;
  filter: Filter;
  matches: EventMatcher;
  ceiling: CaptureLevel | undefined;
  from: 'all' | readonly Position[] | undefined;
}

/** How a binding writes to its consumer; each answers false when the consumer is gone. */
export interface SubscriptionOutput {
  event: (text: string) => Promise<boolean>;
  exhausted: (session: string, earliest: { epoch: number; seq: number }) => Promise<boolean>;
}

type Runtime = Pick<RelayRuntime, 'eventLog' | 'subscriptions' | 'parking' | 'config' | 'now'>;

/** Records the subscription in state `replaying`; false when the connection holds `maxSubscriptions` already. */
export async function recordSubscription(runtime: Pick<RelayRuntime, 'subscriptions'>, spec: SubscriptionSpec, maxSubscriptions: number): Promise<boolean> {
  const pinnedSessions = sessionEqualityOf(spec.filter);
  const typeSegments = typeSegmentsOf(spec.filter);
  return runtime.subscriptions.addSubscription(
    spec.tenant,
    spec.connectionId,
    {
      subscriptionId: spec.subscriptionId,
      filter: JSON.stringify(spec.filter),
      ...(spec.ceiling === undefined ? {} : { ceiling: spec.ceiling }),
      ...(pinnedSessions === undefined ? {} : { sessions: pinnedSessions }),
      ...(typeSegments === undefined ? {} : { typeSegments }),
    },
    maxSubscriptions,
  );
}

/**
 * Writes the replay `from` asks for. Returns the positions it delivered, or undefined when the
 * consumer went away.
 */
export async function replayInto(runtime: Pick<RelayRuntime, 'eventLog' | 'config' | 'now'>, spec: SubscriptionSpec, output: SubscriptionOutput): Promise<DeliveredPositions | undefined> {
  const delivered = new DeliveredPositions();
  if (spec.from === undefined) return delivered;
  if (Array.isArray(spec.from)) for (const position of spec.from) delivered.raise(position);
  const steps = replaySteps(runtime.eventLog, {
    tenant: spec.tenant,
    from: spec.from,
    matches: spec.matches,
    ...(spec.ceiling === undefined ? {} : { ceiling: spec.ceiling }),
    // What the session held when the subscription opened is in its replay, unless fan-out lags past the wait.
    settle: { waitMs: runtime.config.replaySettleMs, now: runtime.now, sleep: async (ms) => void (await delay(ms)) },
  });
  for await (const step of steps) {
    const written = step.kind === 'exhausted' ? await output.exhausted(step.session, step.earliest) : await output.event(step.text);
    if (!written) return undefined;
    if (step.kind === 'event' && step.position !== undefined) delivered.add(step.position);
  }
  return delivered;
}

export interface GoLiveOptions {
  /**
   * Catch up from the log with events of the filter's pinned sessions stored since this time
   * (ms): a stream measures its start from the request's arrival, before its subscription
   * was recorded, and fan-out could not deliver what was stored in between.
   */
  catchUpSinceMs?: number;
}

/** Delivers what was parked during the replay and flips the subscription to live; false when the consumer went away. */
export async function goLive(runtime: Runtime, spec: SubscriptionSpec, delivered: DeliveredPositions, output: SubscriptionOutput, options: GoLiveOptions = {}): Promise<boolean> {
  // The catch-up goes out with the parked events, merged in position order (`handOffToLive`):
  // sent before them, one of its events could reach the consumer above a parked one it lacks.
  const caughtUp: ParkedEvent[] = [];
  if (options.catchUpSinceMs !== undefined) {
    for (const session of sessionEqualityOf(spec.filter) ?? []) {
      for (const item of await runtime.eventLog.storedSince(spec.tenant, session, options.catchUpSinceMs)) {
        const event = parseStored(item.raw);
        if (event !== undefined && spec.matches(event)) caughtUp.push({ raw: item.raw, inOrder: false });
      }
    }
  }
  return handOffToLive(runtime, { tenant: spec.tenant, connectionId: spec.connectionId, subscriptionId: spec.subscriptionId, ceiling: spec.ceiling, delivered, deliver: output.event, alsoDeliver: caughtUp });
}

/** Replays, then goes live: the whole of a recorded subscription's opening. */
export async function openSubscription(runtime: Runtime, spec: SubscriptionSpec, output: SubscriptionOutput, options: GoLiveOptions = {}): Promise<boolean> {
  const delivered = await replayInto(runtime, spec, output);
  return delivered !== undefined && goLive(runtime, spec, delivered, output, options);
}
