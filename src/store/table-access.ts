/** Reads and deletes that several stores of one table share: whole-partition queries and batched deletes. */
import { BatchWriteItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, WriteRequest } from '@aws-sdk/client-dynamodb';
import { str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';

/** Every item of a partition (optionally those whose sort key starts with `sortPrefix`), strongly consistent. */
export async function queryAll(client: DynamoDBClient, tableName: string, partition: string, sortPrefix?: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: sortPrefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': str(partition), ...(sortPrefix === undefined ? {} : { ':prefix': str(sortPrefix) }) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

/** Deletes items 25 at a time, retrying what DynamoDB leaves unprocessed with backoff. */
export async function deleteKeys(client: DynamoDBClient, tableName: string, keys: ReadonlyArray<{ pk: string; sk: string }>): Promise<void> {
  for (let offset = 0; offset < keys.length; offset += 25) {
    let requests: WriteRequest[] = keys.slice(offset, offset + 25).map((key) => ({ DeleteRequest: { Key: { pk: str(key.pk), sk: str(key.sk) } } }));
    for (let attempt = 0; requests.length > 0; attempt += 1) {
      const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }));
      requests = result.UnprocessedItems?.[tableName] ?? [];
      if (requests.length > 0) {
        if (attempt >= 8) throw new Error(`could not delete ${requests.length} connection items after retries`);
        await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 25));
      }
    }
  }
}

/** The TTL attribute value (epoch seconds) for an item that lives `lifetimeSeconds` from `nowMs`. */
export function expiresAfter(nowMs: number, lifetimeSeconds: number): number {
  return Math.floor(nowMs / 1000) + lifetimeSeconds;
}
