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
 *
 * Reads cost what an empty read is billed. Most reads of a live stream find nothing, so each
 * read starts with an eventually consistent probe of one item (half a read unit, the least a
 * read is billed: DynamoDB Developer Guide, "DynamoDB read and write operations"); only when the
 * probe finds something does the reader make the strongly consistent query that returns the
 * deliveries. Why the deliveries still come from a strongly consistent read: an eventually
 * consistent query may miss a delivery that is committed and show a later one, which would put
 * a stream's events out of order, and may show one already deleted, which would deliver it
 * twice; the strongly consistent query sees every committed delivery and no deleted one. What
 * the probe may do is be stale ("the responses may not reflect the results of a recently
 * completed write"; repeated "after a short time", they do: DynamoDB Developer Guide, "DynamoDB
 * read consistency", which gives no bound). A probe that misses a delivery delays it, never
 * loses it (it stays in the inbox until a read returned it), and the delay is bounded here, not
 * by DynamoDB: a read at least every `STRONG_READ_EVERY_MS` skips the probe. A probe that shows a
 * deleted delivery costs one strongly consistent query that finds nothing new.
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
  /**
   * Whether each read starts with the eventually consistent probe (above). Default true; false
   * reads strongly consistently every time (the bench's "before" figure).
   */
  probeFirst?: boolean;
}

/**
 * The longest a reader goes on probes alone: past it, a read is strongly consistent whatever a
 * probe would say, so a delivery a stale probe missed waits this long at most (one read unit per
 * 15 s on an idle stream, against 0.5 per probe).
 */
export const STRONG_READ_EVERY_MS = 15_000;

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
    // The first read is strongly consistent: a delivery made while the stream went live is seen at once.
    let strongReadAt = Number.NEGATIVE_INFINITY;
    return async () => {
      if (toDelete.length > 0) {
        const deleted = await this.deleteAll(partition, toDelete);
        for (const key of deleted) returned.delete(key);
        toDelete = toDelete.filter((key) => !deleted.includes(key));
      }
      const probing = this.options.probeFirst !== false && this.options.now() - strongReadAt < STRONG_READ_EVERY_MS;
      if (probing && !(await this.probeFindsAny(partition))) return [];
      strongReadAt = this.options.now();
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

  /** One item at most, eventually consistent: half a read unit whether or not it finds one. */
  private async probeFindsAny(partition: string): Promise<boolean> {
    const page = await this.client.send(
      new QueryCommand({ TableName: this.options.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': str(partition) }, ConsistentRead: false, Limit: 1 }),
    );
    return (page.Items ?? []).length > 0;
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
