/**
 * The SSE inbox reader on DynamoDB Local: it returns every delivery once, however late it was
 * committed relative to its key's time (two fan-out invocations on two shards may commit out of
 * key order by more than any clock bound), and deletes what it returned the read before.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { encodeUlidTime } from '../../src/protocol/ulid.ts';
import { InboxStore, inboxPartition } from '../../src/store/inbox-store.ts';
import { dynamoClient, mintId, tableNames, uniqueName } from '../support/relay-fixtures.ts';

describe('inbox store', () => {
  it('returns a delivery committed late with an old key, each delivery once, and deletes what it returned', async () => {
    const client = dynamoClient();
    let nextKey = mintId;
    const inbox = new InboxStore(client, { tableName: tableNames.connections, now: Date.now, mintId: () => nextKey(), lifetimeSeconds: 600 });
    const tenant = uniqueName('inbox');
    const stream = 'sse-test';
    const read = inbox.reader(tenant, stream);
    await inbox.append(tenant, stream, 'first');
    await inbox.append(tenant, stream, 'second');
    expect((await read()).map((item) => item.text)).toEqual(['first', 'second']);
    // Committed now, keyed ten minutes ago: a key-time window would have passed it by.
    nextKey = () => `${encodeUlidTime(Date.now() - 600_000)}0000000000000000`;
    await inbox.append(tenant, stream, 'late');
    nextKey = mintId;
    await inbox.append(tenant, stream, 'third');
    expect((await read()).map((item) => item.text)).toEqual(['late', 'third']);
    expect(await read()).toEqual([]);
    // Everything returned before the last read is gone.
    const left = await client.send(new QueryCommand({ TableName: tableNames.connections, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: inboxPartition(tenant, stream) } }, ConsistentRead: true }));
    expect(left.Items ?? []).toEqual([]);
  });
});
