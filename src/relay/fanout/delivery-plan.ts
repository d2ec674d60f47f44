/**
 * What a batch becomes, per connection: the ordered actions fan-out runs for it. Pure: it reads
 * the subscriptions fan-out already holds and writes nothing.
 *
 * - one `post` per event and connection, at the most permissive ceiling among the connection's
 *   matching subscriptions (AEP-0003 §6.4), naming every subscription it serves;
 * - a `park` for each matching subscription still replaying (the replay handoff delivers it);
 * - for a connection fan-out already decided to disconnect (an entry carries a closing mark,
 *   AEP-0003 §8.4), a single `retry-closing` and nothing else: it gets no more events.
 */
import { compileFilter, validateFilter } from '../../protocol/attr-match.ts';
import type { EventMatcher } from '../../protocol/attr-match.ts';
import { captureRank } from '../../protocol/levels.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { StoredSubscription } from '../domain/subscription.ts';
import { deliveryText } from '../delivery-text.ts';

export type DeliveryAction =
  | { kind: 'post'; deliverable: Deliverable; ceiling: CaptureLevel | undefined; subscriptionIds: string[] }
  /** `inOrder`: stored with nothing higher of its session before it (`ParkedEvent.inOrder`). */
  | { kind: 'park'; deliverable: Deliverable; subscription: StoredSubscription; inOrder: boolean }
  | { kind: 'retry-closing' };

export interface ConnectionPlan {
  tenant: string;
  connectionId: string;
  actions: DeliveryAction[];
  /** Every entry of this connection fan-out read (matching or not): what a closing mark goes on. */
  entries: StoredSubscription[];
}

/**
 * Plans one tenant's deliverables (in delivery order) against the subscriptions read for them.
 * `alreadyGiven` names, per deliverable, connections that got it before (as a gap fill,
 * `session-sequencer.ts`).
 */
export function planTenant(
  tenant: string,
  deliverables: readonly Deliverable[],
  subscriptions: readonly StoredSubscription[],
  plans: Map<string, ConnectionPlan>,
  alreadyGiven: (deliverable: Deliverable) => ReadonlySet<string> | undefined = () => undefined,
  late: ReadonlySet<Deliverable> = new Set(),
): void {
  const matchers = new Map<string, EventMatcher | undefined>();
  const planOf = (connectionId: string): ConnectionPlan => {
    let plan = plans.get(connectionId);
    if (plan === undefined) {
      plan = { tenant, connectionId, actions: [], entries: [] };
      plans.set(connectionId, plan);
    }
    return plan;
  };
  const closing = new Set<string>();
  for (const subscription of subscriptions) {
    planOf(subscription.connectionId).entries.push(subscription);
    if (subscription.closing !== undefined) closing.add(subscription.connectionId);
  }
  for (const connectionId of closing) planOf(connectionId).actions.push({ kind: 'retry-closing' });
  for (const deliverable of deliverables) {
    const posts = new Map<string, Extract<DeliveryAction, { kind: 'post' }>>();
    const given = alreadyGiven(deliverable);
    for (const subscription of subscriptions) {
      if (closing.has(subscription.connectionId) || given?.has(subscription.connectionId) === true) continue;
      const matches = matcherFor(subscription.filter, matchers);
      if (matches === undefined || !matches(deliverable.event)) continue;
      // An event the consumer already has (replayed to it, or before its resume point) that
      // reaches the stream only after the subscription went live is not sent again; but an
      // event stored late (after a higher one) may be below those and still new to it.
      if (isCovered(deliverable, subscription, late)) continue;
      const plan = planOf(subscription.connectionId);
      if (subscription.state === 'replaying') {
        plan.actions.push({ kind: 'park', deliverable, subscription, inOrder: storedInOrder(deliverable, late) });
        continue;
      }
      const existing = posts.get(subscription.connectionId);
      if (existing === undefined) {
        const post: Extract<DeliveryAction, { kind: 'post' }> = { kind: 'post', deliverable, ceiling: subscription.ceiling, subscriptionIds: [subscription.subscriptionId] };
        posts.set(subscription.connectionId, post);
        plan.actions.push(post);
      } else {
        existing.ceiling = morePermissive(existing.ceiling, subscription.ceiling);
        existing.subscriptionIds.push(subscription.subscriptionId);
      }
    }
  }
  // Connections with nothing to do were only read; drop them so the pool does not visit them.
  for (const [connectionId, plan] of plans) if (plan.tenant === tenant && plan.actions.length === 0) plans.delete(connectionId);
}

/**
 * Covered: at or below the highest position the subscription's opening left the consumer with,
 * and stored in order (when it was stored, nothing higher was): then the consumer has it, from
 * its replay or from before its resume point. A late arrival or a gap fill never is.
 */
function isCovered(deliverable: Deliverable, subscription: StoredSubscription, late: ReadonlySet<Deliverable>): boolean {
  // Redeliveries always traverse: a re-sent ack is how a lost one is recovered (AEP-0004 §3).
  if (deliverable.kind === 'redelivery' || deliverable.gapFill === true || late.has(deliverable)) return false;
  const position = positionOf(deliverable.event);
  if (position === undefined) return false;
  const covered = subscription.covered[position.session];
  return covered !== undefined && comparePositions(position, covered) <= 0;
}

/** A newly stored event fan-out saw stored in order: not late, not a gap fill (read before its record), not a redelivery. */
function storedInOrder(deliverable: Deliverable, late: ReadonlySet<Deliverable>): boolean {
  return deliverable.kind === 'event' && deliverable.gapFill !== true && !late.has(deliverable);
}

function matcherFor(filterText: string, matchers: Map<string, EventMatcher | undefined>): EventMatcher | undefined {
  if (matchers.has(filterText)) return matchers.get(filterText);
  let matcher: EventMatcher | undefined;
  try {
    const validation = validateFilter(JSON.parse(filterText));
    matcher = validation.ok ? compileFilter(validation.filter) : undefined;
  } catch {
    matcher = undefined;
  }
  matchers.set(filterText, matcher);
  return matcher;
}

/** Absent ceiling means "as stored", the most permissive. */
function morePermissive(left: CaptureLevel | undefined, right: CaptureLevel | undefined): CaptureLevel | undefined {
  if (left === undefined || right === undefined) return undefined;
  return captureRank(left) >= captureRank(right) ? left : right;
}

/**
 * The delivered text of an event under a ceiling, computed once per batch however many
 * connections receive it (a thousand subscribers must not down-level a thousand times).
 */
export class DeliveryTexts {
  private readonly texts = new Map<Deliverable, Map<CaptureLevel | undefined, string>>();

  textOf(deliverable: Deliverable, ceiling: CaptureLevel | undefined): string {
    let byCeiling = this.texts.get(deliverable);
    if (byCeiling === undefined) {
      byCeiling = new Map();
      this.texts.set(deliverable, byCeiling);
    }
    let text = byCeiling.get(ceiling);
    if (text === undefined) {
      text = deliveryText(deliverable.raw, deliverable.event, ceiling);
      byCeiling.set(ceiling, text);
    }
    return text;
  }
}
