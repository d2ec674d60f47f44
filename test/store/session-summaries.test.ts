import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { SessionActivity } from '../../src/relay/domain/history.ts';
import { sessionActivitiesOf } from '../../src/store/event-stream.ts';
import { SessionRegistry } from '../../src/store/session-registry.ts';
import { SessionSummaryStore } from '../../src/store/session-summaries.ts';
import { dynamoClient, sessionEvent, tableNames, uniqueName } from '../support/relay-fixtures.ts';

function insert(tenant: string, event: Record<string, unknown>, sequenceNumber: number, storedAt: number, partition = `T#${tenant}#S#${String(event.session)}`): DynamoDBRecord {
  return {
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(sequenceNumber),
      NewImage: { pk: { S: partition }, kind: { S: 'event' }, raw: { S: JSON.stringify(event) }, storedAt: { N: String(storedAt) }, expiresAt: { N: String(Math.floor(storedAt / 1000) + 3600) } },
    },
  };
}

describe('session summaries from the event stream', () => {
  const store = new SessionSummaryStore(dynamoClient(), { tableName: tableNames.events, now: Date.now });
  const foldAll = (activities: readonly SessionActivity[]) => Promise.all(activities.map((activity) => store.fold(activity)));

  it('folds one batch per session and counts a retried batch, whole or bisected, once', async () => {
    const tenant = uniqueName('sum');
    const now = Date.now();
    const records = [
      insert(tenant, sessionEvent('s1', 0, { agent: 'a1' }), 100, now),
      insert(tenant, sessionEvent('s2', 4, { agent: 'a2', epoch: 2 }), 101, now + 1),
      insert(tenant, sessionEvent('s1', 1, { agent: 'a1', type: 'session.ended' }), 102, now + 2),
      // Agent-scoped partitions are never listed.
      insert(tenant, { ...sessionEvent('s3', 0), session: 's3' }, 103, now + 3, `T#${tenant}#A#tester`),
    ];
    const activities = sessionActivitiesOf(records);
    expect(activities.map((activity) => [activity.session, activity.eventCount, activity.ended])).toEqual([['s1', 2, true], ['s2', 1, false]]);
    await foldAll(activities);
    await foldAll(activities);
    await foldAll(sessionActivitiesOf(records.slice(0, 2)));
    const { items } = await store.listSummaries(tenant, {}, 10);
    expect(items).toEqual([
      { session: 's1', agent: 'a1', firstEventMs: now, lastEventMs: now + 2, lastPosition: { epoch: 0, seq: 1 }, eventCount: 2, ended: true },
      { session: 's2', agent: 'a2', firstEventMs: now + 1, lastEventMs: now + 1, lastPosition: { epoch: 2, seq: 4 }, eventCount: 1, ended: false },
    ]);
    await foldAll(sessionActivitiesOf([insert(tenant, sessionEvent('s2', 5, { agent: 'a2', epoch: 2 }), 104, now + 10)]));
    const after = await store.listSummaries(tenant, {}, 10);
    expect(after.items.map((summary) => [summary.session, summary.eventCount])).toEqual([['s2', 2], ['s1', 2]]);
    expect((await store.listSummaries(tenant, { agent: 'a1' }, 10)).items.map((summary) => summary.session)).toEqual(['s1']);
    expect((await store.listSummaries(tenant, { prefix: 's2' }, 10)).items.map((summary) => summary.session)).toEqual(['s2']);
    expect((await store.listSummaries(uniqueName('sum-other'), {}, 10)).items).toEqual([]);
  });

  it('counts a retried batch once: a fold whose watermark is not newer writes nothing', async () => {
    const tenant = uniqueName('retry');
    const now = Date.now();
    const activity = (sequenceNumber: number, seq: number) => sessionActivitiesOf([insert(tenant, sessionEvent('s', seq), sequenceNumber, now)])[0] as SessionActivity;
    await store.fold(activity(200, 3));
    await store.fold(activity(200, 3));
    await store.fold(activity(201, 4));
    expect((await store.listSummaries(tenant, {}, 10)).items.map((summary) => [summary.eventCount, summary.lastPosition])).toEqual([[2, { epoch: 0, seq: 4 }]]);
  });

  it("keeps the session item until its longest-lived event's expiry: a lowered retention never brings it forward", async () => {
    const tenant = uniqueName('ttl');
    const client = dynamoClient();
    const registry = new SessionRegistry(client, { tableName: tableNames.events, refreshMs: 0 });
    const expiry = async () =>
      Number((await client.send(new GetItemCommand({ TableName: tableNames.events, Key: { pk: { S: `T#${tenant}#SESSIONS` }, sk: { S: 's' } }, ConsistentRead: true }))).Item?.expiresAt?.N);
    const now = Date.now();
    await registry.register(tenant, 's', now, 30 * 86_400);
    expect(await expiry()).toBe(30 * 86_400);
    // Retention lowered: the new event expires sooner, the older ones still need the item.
    await registry.register(tenant, 's', now + 1, 2 * 86_400);
    await store.fold(sessionActivitiesOf([insert(tenant, sessionEvent('s', 0), 300, now)])[0] as SessionActivity);
    expect(await expiry()).toBe(30 * 86_400);
    await registry.register(tenant, 's', now + 2, 40 * 86_400);
    expect(await expiry()).toBe(40 * 86_400);
  });
});
