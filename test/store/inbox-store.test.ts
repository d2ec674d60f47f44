/**
 * The SSE inbox reader on DynamoDB Local: it returns every delivery once, however late it was
 * committed relative to its key's time (two fan-out invocations on two shards may commit out of
 * key order by more than any clock bound), and deletes what it returned the read before.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { encodeUlidTime } from '../../src/protocol/ulid.ts';
import { InboxStore, inboxPartition, STRONG_READ_EVERY_MS } from '../../src/store/inbox-store.ts';
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

describe('inbox reads', () => {
  /** The inbox queries a client made, by consistency and limit. */
  function queriesOf(client: ReturnType<typeof dynamoClient>): Array<{ consistent: boolean; limit?: number }> {
    const seen: Array<{ consistent: boolean; limit?: number }> = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') {
          const input = args.input as { ConsistentRead?: boolean; Limit?: number };
          seen.push({ consistent: input.ConsistentRead === true, ...(input.Limit === undefined ? {} : { limit: input.Limit }) });
        }
        return next(args);
      },
      { step: 'initialize', name: 'inboxQueryLog' },
    );
    return seen;
  }

  it('reads strongly first, then an empty read is one eventually consistent query of one item, and a read that finds deliveries returns them from a strongly consistent one', async () => {
    const client = dynamoClient();
    const queries = queriesOf(client);
    const inbox = new InboxStore(client, { tableName: tableNames.connections, now: Date.now, mintId, lifetimeSeconds: 600 });
    const tenant = uniqueName('inbox-probe');
    const read = inbox.reader(tenant, 'sse-probe');
    expect(await read()).toEqual([]);
    expect(queries.splice(0)).toEqual([{ consistent: true }]);
    expect(await read()).toEqual([]);
    expect(queries.splice(0)).toEqual([{ consistent: false, limit: 1 }]);
    await inbox.append(tenant, 'sse-probe', 'one');
    await inbox.append(tenant, 'sse-probe', 'two');
    expect((await read()).map((item) => item.text)).toEqual(['one', 'two']);
    expect(queries.splice(0)).toEqual([{ consistent: false, limit: 1 }, { consistent: true }]);
  });

  it('skips the probe once STRONG_READ_EVERY_MS has passed since the last strongly consistent read', async () => {
    const client = dynamoClient();
    const queries = queriesOf(client);
    let now = 1_000_000;
    const inbox = new InboxStore(client, { tableName: tableNames.connections, now: () => now, mintId, lifetimeSeconds: 600 });
    const read = inbox.reader(uniqueName('inbox-strong'), 'sse-strong');
    await read();
    now += STRONG_READ_EVERY_MS - 1;
    await read();
    now += 1;
    await read();
    expect(queries).toEqual([{ consistent: true }, { consistent: false, limit: 1 }, { consistent: true }]);
  });

  it('reads strongly every time with probeFirst false', async () => {
    const client = dynamoClient();
    const queries = queriesOf(client);
    const inbox = new InboxStore(client, { tableName: tableNames.connections, now: Date.now, mintId, lifetimeSeconds: 600, probeFirst: false });
    const read = inbox.reader(uniqueName('inbox-noprobe'), 'sse-noprobe');
    await read();
    await read();
    expect(queries).toEqual([{ consistent: true }, { consistent: true }]);
  });
});
