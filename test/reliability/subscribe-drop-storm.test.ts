/**
 * A connect-subscribe-drop storm (tenant isolation, item 16). Consumers subscribe with a replay
 * and drop at once, while events keep coming, so `$disconnect` races the replay-to-live handoff
 * (which flips each index entry to live) and fan-out's parking of events for replaying entries.
 * Before the fix, a handoff that ran after `$disconnect` re-created the entry with an update,
 * without its connection or expiry, and TTL never removed it: fan-out read it for every later
 * event of the session, for good. Afterwards no index entry of the tenant is left without an
 * expiry (and once every `$disconnect` ran, none is left at all).
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient, ndjson, postEvents, sessionEvent, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openSocket } from '../support/ws-client.ts';

const SOCKETS = 200;
const AT_ONCE = 40;

async function tenantItems(tenant: string): Promise<Array<Record<string, AttributeValue>>> {
  const client = dynamoClient();
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableNames.connections,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: `T#${tenant}#` } },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  client.destroy();
  return items;
}

const isIndexEntry = (item: Record<string, AttributeValue>) => (item.pk?.S ?? '').includes('#SUBS#');
const isConnectionRecord = (item: Record<string, AttributeValue>) => item.sk?.S === 'CONN';

describe('a connect-subscribe-drop storm', () => {
  it('leaves no subscription index entry without an expiry', async () => {
    const tenant = uniqueName('storm');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const session = uniqueName('s');
    let seq = 0;
    const emit = async (count: number) => {
      const events = Array.from({ length: count }, () => sessionEvent(session, seq++));
      // A relay too busy says so (503, Retry-After); the client sends the same events again.
      for (;;) {
        const { status } = await postEvents(ndjson(events), { contentType: 'application/x-ndjson', token });
        if (status !== 503) return expect(status).toBe(202);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const connect = async (): Promise<Awaited<ReturnType<typeof openSocket>>> => {
      for (;;) {
        try {
          return await openSocket({ token });
        } catch (error) {
          if (!String(error).includes('handshake refused: 503')) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    };
    await emit(50);

    // Events keep arriving during the storm, so fan-out parks them for entries still replaying.
    let storming = true;
    const emitter = (async () => {
      while (storming) {
        await emit(5);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    let subscribed = 0;
    for (let wave = 0; wave < SOCKETS / AT_ONCE; wave += 1) {
      await Promise.all(
        Array.from({ length: AT_ONCE }, async (_unused, index) => {
          const client = await connect();
          client.send({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} });
          client.send({ type: 'subscribe', id: `s${wave}-${index}`, filter: { session }, from: [{ session, epoch: 0, seq: -1 }] });
          // Some drop at once, some mid-replay, some right after `subscribed`.
          if (index % 3 === 1) await client.next((frame) => frame.type === 'hello', 10_000).catch(() => undefined);
          if (index % 3 === 2) await client.next((frame) => frame.type === 'subscribed' || frame.session === session, 10_000).catch(() => undefined);
          client.socket.terminate();
          subscribed += 1;
        }),
      );
    }
    storming = false;
    await emitter;

    // Every `$disconnect` runs (the connection records go), then what is left is looked at.
    const deadline = Date.now() + 30_000;
    let items = await tenantItems(tenant);
    while (items.some(isConnectionRecord) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      items = await tenantItems(tenant);
    }
    // One more stream batch for the events stored last, whose handoffs may still be running.
    await emit(1);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    items = await tenantItems(tenant);
    const entries = items.filter(isIndexEntry);
    console.log(`[storm] ${subscribed} sockets subscribed and dropped beside ${seq} events; left: ${items.filter(isConnectionRecord).length} connection records, ${entries.length} index entries`);
    expect(items.filter(isConnectionRecord)).toEqual([]);
    expect(entries.filter((entry) => entry.expiresAt?.N === undefined || entry.connectionId?.S === undefined)).toEqual([]);
    expect(entries).toEqual([]);
  }, 180_000);
});
