/**
 * Per-stream inboxes that carry fan-out deliveries to SSE streams. A Lambda response stream
 * has no address fan-out could post to (unlike a WebSocket connection), so fan-out writes
 * each delivery as an item under the stream's inbox partition and the stream handler reads
 * its inbox. Items expire by TTL; the reader never deletes them.
 *
 * Sort keys are ULIDs minted at write time. Two fan-out invocations (different shards) may
 * write out of ULID order by up to their clock skew plus write latency, so the reader
 * re-reads a short look-back window and skips what it has already seen.
 */
import { PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { encodeUlidTime } from '../protocol/ulid.ts';
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
  /** How far back (ms) each read looks again for late writes. */
  lookBackMs: number;
}

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

  /** A reader that returns each delivery once, in key order, across calls. */
  reader(tenant: string, streamId: string, startedAtMs: number): () => Promise<InboxItem[]> {
    const seen = new Set<string>();
    let newestKey = encodeUlidTime(Math.max(0, startedAtMs - this.options.lookBackMs));
    return async () => {
      const from = lowerKey(newestKey, this.options.lookBackMs);
      const fresh: InboxItem[] = [];
      let start: Item | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.options.tableName,
            KeyConditionExpression: 'pk = :pk AND sk > :from',
            ExpressionAttributeValues: { ':pk': str(inboxPartition(tenant, streamId)), ':from': str(from) },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const key = readString(item, 'sk') ?? '';
          if (seen.has(key)) continue;
          seen.add(key);
          const closing = readString(item, 'closing');
          fresh.push({ key, text: readString(item, 'body') ?? '', ...(closing === undefined ? {} : { closing }) });
          if (key > newestKey) newestKey = key;
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      // The lower bound only grows, so keys at or below it can never be read again.
      for (const key of seen) if (key <= from) seen.delete(key);
      return fresh;
    };
  }
}

/** The ULID prefix `lookBackMs` before a key's time. */
function lowerKey(key: string, lookBackMs: number): string {
  return encodeUlidTime(Math.max(0, decodeUlidTime(key) - lookBackMs));
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function decodeUlidTime(key: string): number {
  let time = 0;
  for (const char of key.slice(0, 10)) time = time * 32 + Math.max(0, CROCKFORD.indexOf(char));
  return time;
}
