/**
 * Bridge dead letters, one partition per tenant (`T#{tenant}#BRIDGEDLQ`), sorted by a ULID so
 * the listing is oldest first. A letter holds the stored texts of the events a sink refused;
 * one that would pass DynamoDB's item size is split into several. Letters expire after
 * {@link DEAD_LETTER_RETENTION_DAYS} (the events table keeps history no longer either).
 */
import { DeleteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import type { DeadLetter, DeadLettersPort } from '../relay/ports/dead-letters.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { num, readNumber, readString, str } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export const DEAD_LETTER_RETENTION_DAYS = 14;
/** Event text per item, well under DynamoDB's 400 KB item limit. */
const MAX_LETTER_BYTES = 300_000;

export class DeadLetterStore implements DeadLettersPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
    private readonly mintId: IdMinter,
  ) {}

  async park(tenant: string, letter: Omit<DeadLetter, 'id'>): Promise<void> {
    for (const events of chunks(letter.events)) {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            pk: str(tenantKeys.deadLetterPartition(tenant)),
            sk: str(this.mintId()),
            sink: str(letter.sink),
            reason: str(letter.reason.slice(0, 500)),
            failedAt: num(letter.failedAtMs),
            events: { L: events.map(str) },
            expiresAt: num(Math.floor(this.now() / 1000) + DEAD_LETTER_RETENTION_DAYS * 86_400),
          },
        }),
      );
    }
  }

  async list(tenant: string, limit: number): Promise<DeadLetter[]> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': str(tenantKeys.deadLetterPartition(tenant)) },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (result.Items ?? []).map((item) => ({
      id: readString(item, 'sk') ?? '',
      sink: readString(item, 'sink') ?? '',
      reason: readString(item, 'reason') ?? '',
      failedAtMs: readNumber(item, 'failedAt') ?? 0,
      events: (item.events?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S])),
    }));
  }

  async remove(tenant: string, id: string): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: { pk: str(tenantKeys.deadLetterPartition(tenant)), sk: str(id) } }));
  }
}

function chunks(events: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(event, 'utf8');
    if (current.length > 0 && bytes + size > MAX_LETTER_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
