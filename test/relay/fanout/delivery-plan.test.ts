/**
 * What a batch becomes per connection (`fanout/delivery-plan.ts`), pure: one post per event and
 * connection at the most permissive ceiling among its matching subscriptions, a park per
 * replaying subscription, only a closing retry for a connection already being disconnected, and
 * nothing for connections nothing matched.
 */
import { describe, expect, it } from 'vitest';
import { parseStored } from '../../../src/relay/domain/delivery-text.ts';
import type { Deliverable } from '../../../src/relay/domain/deliverable.ts';
import type { StoredSubscription } from '../../../src/relay/domain/subscription.ts';
import { planTenant } from '../../../src/relay/fanout/delivery-plan.ts';
import type { ConnectionPlan } from '../../../src/relay/fanout/delivery-plan.ts';
import { sessionEvent } from '../../support/relay-fixtures.ts';

function deliverable(session: string, seq: number, type = 'tool.call'): Deliverable {
  const raw = JSON.stringify(sessionEvent(session, seq, { type }));
  return { recordId: String(seq), tenant: 't', raw, event: parseStored(raw)!, kind: 'event' };
}

function subscription(connectionId: string, subscriptionId: string, filter: Record<string, unknown>, extra: Partial<StoredSubscription> = {}): StoredSubscription {
  return { connectionId, subscriptionId, filter: JSON.stringify(filter), state: 'live', pending: [], indexKey: { pk: connectionId, sk: subscriptionId }, ...extra };
}

const summary = (plans: Map<string, ConnectionPlan>) =>
  Object.fromEntries([...plans].map(([connectionId, plan]) => [connectionId, plan.actions.map((action) => (action.kind === 'retry-closing' ? 'closing' : `${action.kind}:${action.deliverable.event.seq}${action.kind === 'post' ? `@${action.ceiling ?? 'stored'}[${action.subscriptionIds.join(',')}]` : ''}`))]));

describe('delivery plan', () => {
  it('posts each event once per connection, at the most permissive ceiling of its matching subscriptions, in delivery order', () => {
    const plans = new Map<string, ConnectionPlan>();
    const events = [deliverable('a', 0), deliverable('a', 1, 'progress.status'), deliverable('b', 0)];
    planTenant('t', events, [subscription('c1', 'tools', { type: ['tool.*'] }, { ceiling: 'metadata' }), subscription('c1', 'all-a', { session: 'a' }, { ceiling: 'redacted' }), subscription('c2', 'b', { session: 'b' })], plans);
    expect(summary(plans)).toEqual({
      c1: ['post:0@redacted[tools,all-a]', 'post:1@redacted[all-a]', 'post:0@metadata[tools]'],
      c2: ['post:0@stored[b]'],
    });
  });

  it('parks for a replaying subscription, plans only the closing retry for a connection being disconnected, and drops connections nothing matched', () => {
    const plans = new Map<string, ConnectionPlan>();
    planTenant(
      't',
      [deliverable('a', 3)],
      [subscription('replaying', 's', { session: 'a' }, { state: 'replaying' }), subscription('closing', 's', { session: 'a' }, { closing: { sinceMs: 1 } }), subscription('other', 's', { session: 'z' }), subscription('broken', 's', {}, { filter: '{not json' })],
      plans,
    );
    expect(summary(plans)).toEqual({ replaying: ['park:3'], closing: ['closing'] });
    expect(plans.get('closing')?.entries).toHaveLength(1);
  });
});
