/**
 * Delivery lanes over in-memory ports: lane counts and the hash split, the work's round trip,
 * and the failure rule (a failed lane runs again from its start, then in the coordinator), with
 * each connection's deliveries in order and none missing whatever failed.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.ts';
import { parseStored } from '../../../src/relay/domain/delivery-text.ts';
import type { Deliverable } from '../../../src/relay/domain/deliverable.ts';
import type { StoredSubscription } from '../../../src/relay/domain/subscription.ts';
import type { FanoutCounts } from '../../../src/relay/fanout/connection-delivery.ts';
import { deliverLane } from '../../../src/relay/fanout/deliver-lane.ts';
import { deliverInLanes, laneCountFor, laneOf, LANE_WORKER_ATTEMPTS, partsUnder, splitIntoLanes } from '../../../src/relay/fanout/delivery-lanes.ts';
import type { LanesRuntime } from '../../../src/relay/fanout/delivery-lanes.ts';
import type { ConnectionPlan } from '../../../src/relay/fanout/delivery-plan.ts';
import { decodeLaneWork, encodeLaneWork, LaneWorkError } from '../../../src/relay/fanout/lane-work.ts';
import type { LaneWork } from '../../../src/relay/fanout/lane-work.ts';
import type { DeliveryLanesPort } from '../../../src/relay/fanout/delivery-lanes-port.ts';
import { sessionEvent } from '../../support/relay-fixtures.ts';

const logger = createLogger({ service: 'test' });

function deliverables(count: number): Deliverable[] {
  return Array.from({ length: count }, (_, index) => {
    const raw = JSON.stringify(sessionEvent('s', index + 1));
    return { recordId: String(index), tenant: 't', raw, event: parseStored(raw)!, kind: 'event' };
  });
}

function entryOf(connectionId: string, state: StoredSubscription['state'] = 'live'): StoredSubscription {
  return { connectionId, subscriptionId: `sub-${connectionId}`, filter: '{}', state, pending: [{ raw: 'x' }], indexKey: { pk: 'p', sk: connectionId } };
}

/** `connections` connections, each receiving every event in order. */
function plans(connections: number, events: readonly Deliverable[]): Map<string, ConnectionPlan> {
  const result = new Map<string, ConnectionPlan>();
  for (let index = 0; index < connections; index += 1) {
    const connectionId = `conn-${index}`;
    const entry = entryOf(connectionId);
    result.set(connectionId, { tenant: 't', connectionId, entries: [entry], actions: events.map((deliverable) => ({ kind: 'post' as const, deliverable, ceiling: undefined, subscriptionIds: [entry.subscriptionId] })) });
  }
  return result;
}

/** A runtime whose poster records each connection's seqs, and which fails a post when `failPost` says so. */
function runtimeRecording(options: { lanes?: DeliveryLanesPort; laneDeliveries?: number; maxLanes?: number } = {}) {
  const received = new Map<string, number[]>();
  const runtime = {
    poster: {
      post: async (connectionId: string, text: string) => {
        const seq = (JSON.parse(text) as { seq: number }).seq;
        received.set(connectionId, [...(received.get(connectionId) ?? []), seq]);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return 'sent' as const;
      },
      close: async () => undefined,
    },
    metrics: { count: () => undefined },
    config: { fanout: { concurrency: 16, closingGraceMs: 10_000, tenantDeliveriesPerBatch: 1_000_000, laneDeliveries: options.laneDeliveries ?? 10, maxLanes: options.maxLanes ?? 4 } },
    now: () => 0,
    ...(options.lanes === undefined ? {} : { deliveryLanes: options.lanes }),
  } as unknown as LanesRuntime;
  return { runtime, received };
}

/** Each connection got seqs 1..events in order once its duplicates are dropped, as a consumer deduping on (source, id) sees them. */
function expectEveryConnectionInOrder(received: Map<string, number[]>, connections: number, events: number): void {
  expect(received.size).toBe(connections);
  for (const seqs of received.values()) {
    const firstCopies = seqs.filter((seq, index) => seqs.indexOf(seq) === index);
    expect(firstCopies).toEqual(Array.from({ length: events }, (_, index) => index + 1));
  }
}

describe('lane counts and the split', () => {
  it('splits only past laneDeliveries, and never past maxLanes', () => {
    const settings = { laneDeliveries: 2_000, maxLanes: 8 };
    expect(laneCountFor(0, settings)).toBe(1);
    expect(laneCountFor(2_000, settings)).toBe(1);
    expect(laneCountFor(2_001, settings)).toBe(2);
    expect(laneCountFor(10_000, settings)).toBe(5);
    expect(laneCountFor(1_000_000, settings)).toBe(8);
    expect(laneCountFor(1_000_000, { laneDeliveries: 2_000, maxLanes: 1 })).toBe(1);
  });

  it('puts each connection, with all of its actions, in the lane its id hashes to, spread evenly', () => {
    const all = plans(4_000, deliverables(2));
    const lanes = splitIntoLanes(all, 4);
    expect(lanes.reduce((sum, lane) => sum + lane.size, 0)).toBe(4_000);
    for (const [index, lane] of lanes.entries()) {
      expect(lane.size).toBeGreaterThan(850);
      for (const [connectionId, plan] of lane) {
        expect(laneOf(connectionId, 4)).toBe(index);
        expect(plan).toBe(all.get(connectionId));
      }
    }
  });
});

describe('lane work', () => {
  it('round-trips the plans through JSON with each event once and no parked events', () => {
    const events = deliverables(3);
    const all = plans(5, events);
    const replaying = entryOf('conn-r', 'replaying');
    all.set('conn-r', { tenant: 't', connectionId: 'conn-r', entries: [replaying], actions: [{ kind: 'park', deliverable: events[0] as Deliverable, subscription: replaying }, { kind: 'retry-closing' }] });
    const work = JSON.parse(JSON.stringify(encodeLaneWork(all))) as LaneWork;
    expect(work.deliverables).toHaveLength(3);
    expect(work.connections.flatMap((connection) => connection.entries.map((entry) => entry.pending))).toEqual(Array.from({ length: 6 }, () => []));
    const back = decodeLaneWork(work);
    expect([...back.keys()]).toEqual([...all.keys()]);
    const post = back.get('conn-0')?.actions[2];
    expect(post).toMatchObject({ kind: 'post', subscriptionIds: ['sub-conn-0'] });
    expect(post?.kind === 'post' ? post.deliverable.event : undefined).toEqual(events[2]?.event);
    const park = back.get('conn-r')?.actions[0];
    expect(park?.kind === 'park' ? park.subscription : undefined).toBe(back.get('conn-r')?.entries[0]);
    // One deliverable object per event, shared by every connection: its texts are made once.
    const first = back.get('conn-1')?.actions[0];
    const again = back.get('conn-2')?.actions[0];
    expect(first?.kind === 'post' && again?.kind === 'post' && first.deliverable === again.deliverable).toBe(true);
  });

  it('refuses work naming what it does not carry', () => {
    const work = encodeLaneWork(plans(1, deliverables(1)));
    const broken = { ...work, connections: work.connections.map((connection) => ({ ...connection, actions: [{ kind: 'post' as const, deliverable: 7, subscriptionIds: [] }] })) };
    expect(() => decodeLaneWork(broken)).toThrow(LaneWorkError);
  });
});

describe('delivering in lanes', () => {
  it('runs lane 0 itself and every other lane in a worker, each connection in order', async () => {
    const worked: number[] = [];
    const lanes: DeliveryLanesPort = {
      deliver: async (work) => {
        worked.push(work.connections.length);
        return deliverLane(runtime, logger, decodeLaneWork(JSON.parse(JSON.stringify(work)) as LaneWork));
      },
    };
    const { runtime, received } = runtimeRecording({ lanes });
    const counts = await deliverInLanes(runtime, logger, plans(40, deliverables(5)));
    expect(worked).toHaveLength(3);
    expect(counts.posted).toBe(200);
    expectEveryConnectionInOrder(received, 40, 5);
  });

  it('keeps everything in the invocation without a lane runner, or under laneDeliveries', async () => {
    for (const options of [{}, { lanes: { deliver: async (): Promise<FanoutCounts> => expect.unreachable() }, laneDeliveries: 1_000 }]) {
      const { runtime, received } = runtimeRecording(options);
      expect((await deliverInLanes(runtime, logger, plans(40, deliverables(5)))).posted).toBe(200);
      expectEveryConnectionInOrder(received, 40, 5);
    }
  });

  it('runs a lane whose worker failed mid-lane again from its start: duplicates, nothing lost, each connection in order', async () => {
    let calls = 0;
    const lanes: DeliveryLanesPort = {
      deliver: async (work) => {
        calls += 1;
        const plans = decodeLaneWork(work);
        if (calls === 1) {
          // The first worker posts part of its lane, then dies.
          const partial = new Map([...plans].map(([id, plan]) => [id, { ...plan, actions: plan.actions.slice(0, 2) }]));
          await deliverLane(runtime, logger, partial);
          throw new Error('worker crashed');
        }
        return deliverLane(runtime, logger, plans);
      },
    };
    const { runtime, received } = runtimeRecording({ lanes, maxLanes: 2 });
    await deliverInLanes(runtime, logger, plans(30, deliverables(6)));
    expect(calls).toBe(2);
    expectEveryConnectionInOrder(received, 30, 6);
    expect([...received.values()].some((seqs) => seqs.length > 6)).toBe(true);
  });

  it('delivers a lane itself once its workers failed every attempt', async () => {
    let calls = 0;
    const lanes: DeliveryLanesPort = {
      deliver: async () => {
        calls += 1;
        throw new Error('no capacity');
      },
    };
    const { runtime, received } = runtimeRecording({ lanes, maxLanes: 3 });
    const counts = await deliverInLanes(runtime, logger, plans(30, deliverables(4)));
    expect(calls).toBe(2 * LANE_WORKER_ATTEMPTS);
    expect(counts.posted).toBe(120);
    expectEveryConnectionInOrder(received, 30, 4);
  });
});

describe('lane payloads', () => {
  it('splits a lane whose work is over the limit into parts under it, each connection whole in one', () => {
    const lane = plans(50, deliverables(20));
    const whole = Buffer.byteLength(JSON.stringify(encodeLaneWork(lane)), 'utf8');
    const parts = partsUnder(lane, Math.ceil(whole / 3));
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.flatMap((part) => [...part.plans.keys()])).toEqual([...lane.keys()]);
    for (const part of parts) {
      expect(part.work).toBeDefined();
      expect(Buffer.byteLength(JSON.stringify(part.work), 'utf8')).toBeLessThanOrEqual(Math.ceil(whole / 3));
    }
  });

  it('leaves a single connection too big to send without work, for the coordinator to deliver', () => {
    const parts = partsUnder(plans(1, deliverables(5)), 100);
    expect(parts).toHaveLength(1);
    expect(parts[0]?.work).toBeUndefined();
  });
});
