/**
 * The deadline index in the connections table (`DeadlineIndexPort`): one item per pending
 * deadline in the partition of the minute it falls in (`deadlineKeys`), read with strongly
 * consistent queries, taken with a conditional delete (so exactly one closer takes it), and
 * expiring by TTL a day after it was due should nothing take it. A connection that closes
 * leaves its deadline in place: the sweep takes it, finds the connection gone, and closes
 * nothing (one conditional delete, where removing it on close would cost one on every close).
 */
import { DeleteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEADLINE_REASONS } from '../relay/ports/connection-deadlines.ts';
import type { ConnectionDeadline, DeadlineReason } from '../relay/ports/connection-deadlines.ts';
import type { DeadlineIndexPort } from '../relay/ports/deadline-index.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { deadlineKeys } from './keys.ts';

const MINUTE_MS = 60_000;
/** A deadline nobody took is kept this long past it (a sweep's lookback is far shorter). */
const KEEP_PAST_DUE_SECONDS = 86_400;

export class DeadlineStore implements DeadlineIndexPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: { tableName: string },
  ) {}

  private key(deadline: ConnectionDeadline): Item {
    return {
      pk: str(deadlineKeys.minutePartition(Math.floor(deadline.atMs / MINUTE_MS))),
      sk: str(deadlineKeys.sort(deadline.atMs, deadline.tenant, deadline.connectionId)),
    };
  }

  async add(deadline: ConnectionDeadline): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          ...this.key(deadline),
          tenant: str(deadline.tenant),
          connectionId: str(deadline.connectionId),
          atMs: num(deadline.atMs),
          reason: str(deadline.reason),
          expiresAt: num(Math.floor(deadline.atMs / 1000) + KEEP_PAST_DUE_SECONDS),
        },
      }),
    );
  }

  async due(sinceMs: number, throughMs: number): Promise<ConnectionDeadline[]> {
    const found: ConnectionDeadline[] = [];
    for (let minute = Math.floor(sinceMs / MINUTE_MS); minute <= Math.floor(throughMs / MINUTE_MS); minute += 1) {
      let start: Item | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.options.tableName,
            KeyConditionExpression: 'pk = :pk AND sk < :after',
            ExpressionAttributeValues: { ':pk': str(deadlineKeys.minutePartition(minute)), ':after': str(deadlineKeys.sortAfter(throughMs)) },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const deadline = deadlineOf(item);
          if (deadline !== undefined && deadline.atMs >= sinceMs) found.push(deadline);
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
    return found.sort((a, b) => a.atMs - b.atMs);
  }

  async claim(deadline: ConnectionDeadline): Promise<boolean> {
    try {
      await this.client.send(new DeleteItemCommand({ TableName: this.options.tableName, Key: this.key(deadline), ConditionExpression: 'attribute_exists(pk)' }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async restore(deadline: ConnectionDeadline): Promise<void> {
    await this.add(deadline);
  }
}

function deadlineOf(item: Item): ConnectionDeadline | undefined {
  const tenant = readString(item, 'tenant');
  const connectionId = readString(item, 'connectionId');
  const atMs = readNumber(item, 'atMs');
  const reason = readString(item, 'reason');
  if (tenant === undefined || connectionId === undefined || atMs === undefined || reason === undefined || !(DEADLINE_REASONS as readonly string[]).includes(reason)) return undefined;
  return { tenant, connectionId, atMs, reason: reason as DeadlineReason };
}
