/**
 * Fan-out's order step over what a session partition really holds, for store tests on tables
 * no stack reads: every emitter's events go through an order lane (`order/order-lane.ts`) as one
 * batch with the order wait long past, so the release points reach the newest events and a
 * replay serves them. `replayOf` is the binding-neutral replay of one session.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OrderLane } from '../../src/relay/fanout/order-lane.ts';
import type { LaneRecord } from '../../src/relay/fanout/order-lane.ts';
import { replaySession } from '../../src/relay/subscribe/session-replay.ts';
import type { SessionReplay } from '../../src/relay/subscribe/session-replay.ts';
import type { Position } from '../../src/protocol/positions.ts';
import type { EventLog } from '../../src/store/event-log.ts';
import { eventKeys } from '../../src/store/keys.ts';
import { SessionOrderStore } from '../../src/store/session-order-store.ts';
import { queryAll } from '../../src/store/table-access.ts';

export function orderStore(client: DynamoDBClient, tableName: string): SessionOrderStore {
  return new SessionOrderStore(client, { tableName, now: Date.now, lifetimeSecondsOf: async () => 86_400 });
}

/** Fan-out finishing with everything a session holds: each emitter's events released through the newest. */
export async function finishFanout(client: DynamoDBClient, tableName: string, tenant: string, session: string): Promise<void> {
  const items = (await queryAll(client, tableName, eventKeys.sessionPartition(tenant, session))).filter((item) => item.kind?.S === 'event' && item.sk?.S?.startsWith('P#') === true);
  const bySource = new Map<string, LaneRecord[]>();
  for (const item of items) {
    const event = JSON.parse(item.raw?.S ?? '{}') as { source: string; epoch?: number; seq: number };
    const records = bySource.get(event.source) ?? [];
    records.push({ place: { epoch: event.epoch ?? 0, seq: event.seq }, storedAtMs: Number(item.storedAt?.N ?? 0), raw: item.raw?.S ?? '' });
    bySource.set(event.source, records);
  }
  // Far enough ahead that every gap is due and every stored event counts as seen.
  const lane = new OrderLane({ order: orderStore(client, tableName), now: () => Date.now() + 3_600_000, waitMs: 1, adoptAfterMs: 1 });
  for (const [source, records] of bySource) {
    let step = await lane.step({ tenant, session, source }, records);
    await lane.confirm(step);
    // Each step passes a bounded number of gaps; go on until nothing more is released.
    while (step.releases.length > 0) {
      step = await lane.step({ tenant, session, source }, []);
      await lane.confirm(step);
    }
  }
}

/** One session's replay as the bindings run it, after `after` when given. */
export function replayOf(client: DynamoDBClient, log: EventLog, tableName: string, window: number, tenant: string, session: string, after?: Position): Promise<SessionReplay> {
  return replaySession({ eventLog: log, sessionOrder: orderStore(client, tableName), window, now: Date.now, sleep: async () => undefined }, tenant, session, after);
}
