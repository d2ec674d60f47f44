/**
 * Per-stream inboxes that carry fan-out deliveries to SSE streams. A Lambda response stream
 * has no address fan-out could post to (unlike a WebSocket connection), so fan-out writes
 * each delivery as an item under the stream's inbox partition and the stream handler reads
 * its inbox.
 *
 * The reader consumes: each read returns every item it has not returned yet, and deletes what
 * the previous read returned (by then written to the client). Nothing depends on clocks: keys
 * are ULIDs minted at write time, and two fan-out invocations (different shards) may commit out
 * of key order, so a reader bounded by key time could pass over a delivery committed late;
 * one that reads whatever is there cannot. Items left behind (a stream that ended) expire by TTL.
 */
import { BatchWriteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import type { InboxItem, InboxPort } from '../relay/ports/inbox.ts';
import { num, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';

export interface InboxStoreOptions {
  tableName: string;
  now: Clock;
  mintId: IdMinter;
  /** How long deliveries stay readable, in seconds. */
  lifetimeSeconds: number;
}

/** BatchWriteItem takes at most 25 requests. */
const DELETE_BATCH = 25;

export const inboxPartition = (tenant: string, streamId: string) => `T#${tenant}#INBOX#${streamId}`;

export class InboxStore implements InboxPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: InboxStoreOptions,
  ) {}

  async append(tenant: string, streamId: string, text: string): Promise<void> {
    await this.put(tenant, streamId, { body: str(text) });
  }

  async notifyClosing(tenant: string, streamId: string, reason: string): Promise<void> {
    await this.put(tenant, streamId, { body: str(''), closing: str(reason) });
  }

  private async put(tenant: string, streamId: string, content: Item): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(inboxPartition(tenant, streamId)),
          sk: str(this.options.mintId()),
          ...content,
          expiresAt: num(Math.floor(this.options.now() / 1000) + this.options.lifetimeSeconds),
        },
      }),
    );
  }

  /** A reader that returns each delivery once, in key order within a read, across calls. */
  reader(tenant: string, streamId: string): () => Promise<InboxItem[]> {
    const partition = inboxPartition(tenant, streamId);
    // Returned and not deleted yet (a failed delete is tried again; the item is not returned twice).
    const returned = new Set<string>();
    let toDelete: string[] = [];
    return async () => {
      if (toDelete.length > 0) {
        const deleted = await this.deleteAll(partition, toDelete);
        for (const key of deleted) returned.delete(key);
        toDelete = toDelete.filter((key) => !deleted.includes(key));
      }
      const fresh: InboxItem[] = [];
      let start: Item | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({ TableName: this.options.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': str(partition) }, ConsistentRead: true, ExclusiveStartKey: start }),
        );
        for (const item of page.Items ?? []) {
          const key = readString(item, 'sk') ?? '';
          if (returned.has(key)) continue;
          returned.add(key);
          toDelete.push(key);
          const closing = readString(item, 'closing');
          fresh.push({ key, text: readString(item, 'body') ?? '', ...(closing === undefined ? {} : { closing }) });
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return fresh;
    };
  }

  /** Deletes these items; answers the keys it deleted (a failure leaves them for the next try). */
  private async deleteAll(partition: string, keys: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const chunk = keys.slice(start, start + DELETE_BATCH);
      try {
        const result = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.options.tableName]: chunk.map((sk) => ({ DeleteRequest: { Key: { pk: str(partition), sk: str(sk) } } })) } }));
        const left = new Set((result.UnprocessedItems?.[this.options.tableName] ?? []).map((request) => request.DeleteRequest?.Key?.sk?.S));
        deleted.push(...chunk.filter((key) => !left.has(key)));
      } catch {
        // Kept for the next read; its items are not returned again meanwhile.
      }
    }
    return deleted;
  }
}
