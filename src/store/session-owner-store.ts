/**
 * Session owners (`owner` items in the events table, one per session under the tenant's
 * owners partition): written by a conditional update, so the first sequenced event's agent
 * wins and no read precedes the write. Not a fan-out item: the stream filter passes only
 * `event` and `redelivery` items.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SessionOwnersPort } from '../relay/ports/session-owners.ts';
import type { Clock } from '../relay/ports/clock.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { expiresAfter } from './table-access.ts';

export interface SessionOwnerStoreOptions {
  tableName: string;
  /** An owner is kept as long as the session's events are retained (renewed by each settle). */
  lifetimeSeconds: number;
  now: Clock;
}

export class SessionOwnerStore implements SessionOwnersPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: SessionOwnerStoreOptions,
  ) {}

  async settleOwner(tenant: string, session: string, agent: string): Promise<string> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: this.keyOf(tenant, session),
          UpdateExpression: 'SET kind = :kind, #owner = :agent, expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(#owner) OR #owner = :agent',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':kind': str('owner'), ':agent': str(agent), ':expires': num(expiresAfter(this.options.now(), this.options.lifetimeSeconds)) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return agent;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return readString(error.Item, 'owner') ?? agent;
    }
  }

  async ownerOf(tenant: string, session: string): Promise<string | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: this.keyOf(tenant, session), ConsistentRead: true }));
    return readString(result.Item, 'owner');
  }

  private keyOf(tenant: string, session: string) {
    return { pk: str(eventKeys.sessionOwnersPartition(tenant)), sk: str(session) };
  }
}
