/**
 * What a batch becomes, per connection: the ordered actions fan-out runs for it. Pure: it reads
 * the subscriptions fan-out already holds and writes nothing.
 *
 * - one `post` per event and connection, at the most permissive ceiling among the connection's
 *   matching subscriptions (AEP-0003 §6.4), naming every subscription it serves;
 * - a `park` for each matching subscription still replaying (the replay handoff delivers what
 *   the consumer does not have already, `order/consumer-has.ts`);
 * - for a connection fan-out already decided to disconnect (an entry carries a closing mark,
 *   AEP-0003 §8.4), a single `retry-closing` and nothing else: it gets no more events.
 */
import { compileFilter, validateFilter } from '../../protocol/attr-match.ts';
import type { EventMatcher } from '../../protocol/attr-match.ts';
import { captureRank } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { StoredSubscription } from '../domain/subscription.ts';
import { deliveryText } from '../domain/delivery-text.ts';

export type DeliveryAction =
  | { kind: 'post'; deliverable: Deliverable; ceiling: CaptureLevel | undefined; subscriptionIds: string[] }
  | { kind: 'park'; deliverable: Deliverable; subscription: StoredSubscription }
  | { kind: 'retry-closing' };

export interface ConnectionPlan {
  tenant: string;
  connectionId: string;
  actions: DeliveryAction[];
  /** Every entry of this connection fan-out read (matching or not): what a closing mark goes on. */
  entries: StoredSubscription[];
}

/** Plans one tenant's deliverables (in delivery order) against the subscriptions read for them. */
export function planTenant(tenant: string, deliverables: readonly Deliverable[], subscriptions: readonly StoredSubscription[], plans: Map<string, ConnectionPlan>): void {
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
    for (const subscription of subscriptions) {
      if (closing.has(subscription.connectionId)) continue;
      const matches = matcherFor(subscription.filter, matchers);
      if (matches === undefined || !matches(deliverable.event)) continue;
      const plan = planOf(subscription.connectionId);
      if (subscription.state === 'replaying') {
        plan.actions.push({ kind: 'park', deliverable, subscription });
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
