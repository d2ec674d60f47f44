/**
 * Deliver or disconnect (AEP-0003 §8.4) for one connection, over in-memory ports: once a
 * notice-or-above event cannot be delivered nothing later is posted, the decision is recorded
 * on the connection's entries before the closing frame is tried, and the positions the consumer
 * is told never lie above the undelivered event (a late one below what it got names nothing).
 */
import { describe, expect, it } from 'vitest';
import { parseStored } from '../../../src/relay/domain/delivery-text.ts';
import type { Deliverable } from '../../../src/relay/domain/deliverable.ts';
import type { ClosingMark, StoredSubscription } from '../../../src/relay/domain/subscription.ts';
import { ConnectionDelivery, TenantDeliveryBudget } from '../../../src/relay/fanout/connection-delivery.ts';
import { DeliveryTexts } from '../../../src/relay/fanout/delivery-plan.ts';
import type { ConnectionPlan, DeliveryAction } from '../../../src/relay/fanout/delivery-plan.ts';
import type { RelayRuntime } from '../../../functions/runtime/relay-runtime.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { sessionEvent } from '../../support/relay-fixtures.ts';

const session = 'slow';
const entry: StoredSubscription = { connectionId: 'c', subscriptionId: 'p', filter: '{}', state: 'live', pending: [], indexKey: { pk: 'p', sk: 's' } };

function deliverable(seq: number, late = false, severity = 'notice'): Deliverable {
  const raw = JSON.stringify(sessionEvent(session, seq, { severity }));
  return { recordId: String(seq), tenant: 't', raw, event: parseStored(raw)!, kind: 'event', ...(late ? { late: true as const } : {}) };
}

/** Runs the plan's actions in order against a poster that takes the seqs in `accepted` and refuses the rest (429). */
async function run(seqs: Array<{ seq: number; late?: boolean; severity?: string }>, accepted: ReadonlySet<number>, budget = Number.MAX_SAFE_INTEGER) {
  const posted: string[] = [];
  const marks: ClosingMark[] = [];
  const deadlines: string[] = [];
  const runtime = {
    poster: {
      post: async (_id: string, text: string) => {
        const frame = JSON.parse(text) as { type?: string; seq?: number };
        if (frame.type === 'closing') {
          posted.push(text);
          return 'throttled';
        }
        if (accepted.has(frame.seq as number)) {
          posted.push(String(frame.seq));
          return 'sent';
        }
        return 'throttled';
      },
      close: async () => undefined,
    },
    subscriptions: {
      markClosing: async (_entry: StoredSubscription, mark: ClosingMark) => {
        expect(posted.some((text) => text.includes('closing'))).toBe(false);
        marks.push(mark);
      },
    },
    connections: { removeConnection: async () => undefined },
    // The closing frame is refused here (429): the decision's deadline ends the connection later.
    deadlines: { schedule: async (deadline: { reason: string }) => void deadlines.push(deadline.reason) },
    metrics: { count: () => undefined },
    config: { fanout: { closingGraceMs: 10_000 } },
    now: () => 0,
  } as unknown as RelayRuntime;
  const actions: DeliveryAction[] = seqs.map(({ seq, late, severity }) => ({ kind: 'post', deliverable: deliverable(seq, late, severity), ceiling: undefined, subscriptionIds: ['p'] }));
  const plan: ConnectionPlan = { tenant: 't', connectionId: 'c', actions, entries: [entry] };
  const counts = { posted: 0, dropped: 0, disconnected: 0, closed: 0 };
  const delivery = new ConnectionDelivery(runtime, createLogger({ service: 'test' }), plan, new DeliveryTexts(), counts, new TenantDeliveryBudget(budget));
  for (const action of actions) {
    let verdict = await delivery.run(action);
    while (typeof verdict === 'object') verdict = await delivery.run(action);
    if (verdict === 'stop') break;
  }
  return { posted, marks, counts, deadlines };
}

describe('deliver or disconnect', () => {
  it('posts nothing after an undeliverable notice, and records the last position delivered before it', async () => {
    const { posted, marks, deadlines } = await run([{ seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4 }], new Set([1, 2, 4]));
    expect(posted.filter((text) => !text.includes('closing'))).toEqual(['1', '2']);
    expect(marks).toEqual([{ sinceMs: 0, delivered: { session, epoch: 0, seq: 2 } }]);
    expect(JSON.parse(posted.at(-1) as string)).toMatchObject({ type: 'closing', delivered: [{ sub: 'p', session, epoch: 0, seq: 2 }] });
    // The frame did not fit: a deadline ends the connection even if no later batch reaches it.
    expect(deadlines).toEqual(['backpressure']);
  });

  it('names no position above an undelivered late notice below what the consumer got', async () => {
    const { posted, marks } = await run([{ seq: 5 }, { seq: 3, late: true }], new Set([5]));
    expect(posted.filter((text) => !text.includes('closing'))).toEqual(['5']);
    expect(marks).toEqual([{ sinceMs: 0 }]);
    expect(JSON.parse(posted.at(-1) as string)).toMatchObject({ type: 'closing', delivered: [] });
  });
});

describe("past the tenant's deliveries for the batch", () => {
  it('posts nothing more and disconnects with the last position delivered, as for a consumer that cannot take more', async () => {
    const everything = new Set([1, 2, 3, 4]);
    const { posted, marks, counts } = await run([{ seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4 }], everything, 2);
    expect(posted.filter((text) => !text.includes('closing'))).toEqual(['1', '2']);
    expect(marks).toEqual([{ sinceMs: 0, delivered: { session, epoch: 0, seq: 2 } }]);
    expect(counts.disconnected).toBe(1);
  });

  it('drops info events past it (AEP-0003 §8.4 allows it) and disconnects at the first notice', async () => {
    const everything = new Set([1, 2, 3, 4]);
    const { posted, marks, counts } = await run([{ seq: 1 }, { seq: 2, severity: 'info' }, { seq: 3, severity: 'info' }, { seq: 4 }], everything, 1);
    expect(posted.filter((text) => !text.includes('closing'))).toEqual(['1']);
    expect(counts.dropped).toBe(2);
    expect(marks).toEqual([{ sinceMs: 0, delivered: { session, epoch: 0, seq: 1 } }]);
  });
});
