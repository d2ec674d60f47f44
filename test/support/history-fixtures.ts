/**
 * Builders for history tests: posting a long session in batches, and aging stored items
 * in DynamoDB Local (which never runs TTL deletion) so expiry can be observed on read.
 */
import { QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { eventKeys } from '../../src/store/keys.ts';
import { dynamoClient, ndjson, postEvents, sessionEvent, tableNames } from './relay-fixtures.ts';

/** Posts `count` events of one epoch (seq 0..count-1) as NDJSON batches of up to 1,000; returns the texts posted. */
export async function postSequence(token: string, session: string, epoch: number, count: number, overrides: Record<string, unknown> = {}): Promise<string[]> {
  const texts: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const events = Array.from({ length: Math.min(1000, count - start) }, (_, index) => sessionEvent(session, start + index, { epoch, ...overrides }));
    const response = await postEvents(ndjson(events), { token, contentType: 'application/x-ndjson' });
    if (response.status !== 202) throw new Error(`POST /events answered ${response.status}: ${await response.text()}`);
    texts.push(...events.map((event) => JSON.stringify(event)));
  }
  return texts;
}

/** Makes stored events of a session whose `seq` is in `seqs` look expired (their TTL passed). */
export async function expireEvents(tenant: string, session: string, seqs: readonly number[]): Promise<void> {
  const client = dynamoClient();
  const page = await client.send(new QueryCommand({ TableName: tableNames.events, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: eventKeys.sessionPartition(tenant, session) } }, ConsistentRead: true }));
  for (const item of page.Items ?? []) {
    const event = JSON.parse(item.raw?.S ?? '{}') as { seq?: number };
    if (event.seq === undefined || !seqs.includes(event.seq)) continue;
    await client.send(new UpdateItemCommand({ TableName: tableNames.events, Key: { pk: item.pk!, sk: item.sk! }, UpdateExpression: 'SET expiresAt = :past', ExpressionAttributeValues: { ':past': { N: String(Math.floor(Date.now() / 1000) - 60) } } }));
  }
}

/** Makes a session's summary look expired (its newest event's TTL passed). */
export async function expireSessionSummary(tenant: string, session: string): Promise<void> {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tableNames.events,
      Key: { pk: { S: eventKeys.sessionRegistryPartition(tenant) }, sk: { S: session } },
      UpdateExpression: 'SET visibleUntil = :past',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':past': { N: String(Math.floor(Date.now() / 1000) - 60) } },
    }),
  );
}

/** Polls until `check` holds (fan-out maintains summaries asynchronously), failing after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
