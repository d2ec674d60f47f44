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
import { sessionEqualityOf, typeSegmentsOf } from '../../protocol/attr-match.ts';
import type { EventMatcher, Filter } from '../../protocol/attr-match.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { Position } from '../../protocol/positions.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import { Opening } from '../order/consumer-has.ts';
import { replaySteps } from './replay-plan.ts';
import { handOffToLive } from './subscription-handoff.ts';
import type { SUBSCRIPTION_GONE } from './subscription-handoff.ts';

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
  /** The replay stops at this time (ms) if it has not finished (`OUT_OF_TIME`); absent: no bound. */
  deadlineMs?: number;
}

/** A replay that did not finish before its deadline: the subscription never went live. */
export const OUT_OF_TIME = 'out-of-time';

type Runtime = Pick<RelayPorts, 'eventLog' | 'sessionOrder' | 'subscriptions' | 'parking' | 'config' | 'now'>;

/** Records the subscription in state `replaying`; false when the connection holds `maxSubscriptions` already. */
export async function recordSubscription(runtime: Pick<RelayPorts, 'subscriptions'>, spec: SubscriptionSpec, maxSubscriptions: number): Promise<boolean> {
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
 * Writes the replay `from` asks for. Returns what the opening gave the consumer (for the
 * handoff), or undefined when the consumer went away.
 */
export async function replayInto(runtime: Pick<RelayPorts, 'eventLog' | 'sessionOrder' | 'config' | 'now'>, spec: SubscriptionSpec, output: SubscriptionOutput): Promise<Opening | undefined | typeof OUT_OF_TIME> {
  const opening = new Opening();
  if (spec.from === undefined) return opening;
  if (Array.isArray(spec.from)) for (const position of spec.from) opening.resumeAfter(position);
  const steps = replaySteps(
    {
      eventLog: runtime.eventLog,
      sessionOrder: runtime.sessionOrder,
      window: runtime.config.replayBuffer,
      // One wait for the whole replay, however many sessions it covers (and never past its deadline).
      settleUntilMs: Math.min(runtime.now() + runtime.config.replaySettleMs, output.deadlineMs ?? Number.POSITIVE_INFINITY),
      now: runtime.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    },
    { tenant: spec.tenant, from: spec.from, matches: spec.matches, ...(spec.ceiling === undefined ? {} : { ceiling: spec.ceiling }) },
  );
  for await (const step of steps) {
    if (output.deadlineMs !== undefined && runtime.now() >= output.deadlineMs) return OUT_OF_TIME;
    if (step.kind === 'released') {
      opening.replayRead(step.session, step.released);
      continue;
    }
    const written = step.kind === 'exhausted' ? await output.exhausted(step.session, step.earliest) : await output.event(step.text);
    if (!written) return undefined;
    if (step.kind === 'event') opening.gave(step.event);
  }
  return opening;
}

/** Delivers what was parked during the replay and flips the subscription to live; false when the consumer went away, `SUBSCRIPTION_GONE` when the subscription did. */
export async function goLive(runtime: Runtime, spec: SubscriptionSpec, opening: Opening, output: SubscriptionOutput): Promise<boolean | typeof SUBSCRIPTION_GONE> {
  return handOffToLive(runtime, { tenant: spec.tenant, connectionId: spec.connectionId, subscriptionId: spec.subscriptionId, ceiling: spec.ceiling, opening, deliver: output.event });
}

/** Replays, then goes live: the whole of a recorded subscription's opening. */
export async function openSubscription(runtime: Runtime, spec: SubscriptionSpec, output: SubscriptionOutput): Promise<boolean | typeof OUT_OF_TIME | typeof SUBSCRIPTION_GONE> {
  const opening = await replayInto(runtime, spec, output);
  if (opening === OUT_OF_TIME) return OUT_OF_TIME;
  return opening !== undefined && goLive(runtime, spec, opening, output);
}
