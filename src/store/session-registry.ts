/**
 * The tenant's registry of sessions it holds history for (`session` items in the events
 * table), which replay-all walks (AEP-0003 §5). Fan-out keeps each item, with the session's
 * summary (`session-summaries.ts`), before it delivers or commits anything a replay could serve.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Page } from '../relay/domain/stored-event.ts';
import { readString, str } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { clampLimit, decodeCursor, pageOf } from './pages.ts';

export class SessionRegistry {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Sessions the tenant holds history for, one bounded page at a time. */
  async list(tenant: string, limit: number, cursor?: string): Promise<Page<string>> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': str(eventKeys.sessionRegistryPartition(tenant)) },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
        Limit: clampLimit(limit),
        ExclusiveStartKey: decodeCursor(cursor),
      }),
    );
    return pageOf((page.Items ?? []).map((record) => readString(record, 'sk') ?? ''), page.LastEvaluatedKey);
  }
}
