/**
 * Subscriptions in DynamoDB (AEP-0003 §6): the record the connection owns (for cleanup) and
 * the index entries fan-out reads: one per pinned session, else one per first type segment the
 * filter names, else one in the tenant's unconstrained set.
 * Layout: `connection-table.ts`.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CaptureLevel } from '../protocol/levels.ts';
import type { ClosingMark, NewSubscription, StoredSubscription, SubscriptionState } from '../relay/domain/subscription.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { SubscriptionsPort } from '../relay/ports/subscriptions.ts';
import { isConditionFailure, num, parseJsonObject, readNumber, readString, readStringSet, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { connectionKeys } from './keys.ts';
import { deleteKeys, expiresAfter, queryAll } from './table-access.ts';

export interface SubscriptionStoreOptions {
  tableName: string;
  now: Clock;
  /** Subscriptions expire with their connection's state. */
  connectionLifetimeSeconds: number;
}

export class SubscriptionStore implements SubscriptionsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: SubscriptionStoreOptions,
  ) {}

  async addSubscription(tenant: string, connectionId: string, subscription: NewSubscription, maxSubscriptions: number): Promise<boolean> {
    await this.removeSubscription(tenant, connectionId, subscription.subscriptionId);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: 'ADD subCount :one',
          ConditionExpression: 'attribute_exists(pk) AND subCount < :max',
          ExpressionAttributeValues: { ':one': num(1), ':max': num(maxSubscriptions) },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    const expiresAt = num(expiresAfter(this.options.now(), this.options.connectionLifetimeSeconds));
    const indexPartitions = indexPartitionsOf(tenant, subscription);
    const shared: Item = {
      connectionId: str(connectionId),
      subscriptionId: str(subscription.subscriptionId),
      filter: str(subscription.filter),
      ...(subscription.ceiling === undefined ? {} : { ceiling: str(subscription.ceiling) }),
      expiresAt,
    };
    // The owned record first: if anything after it fails, cleanup still finds the index entries.
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(connectionKeys.connectionPartition(tenant, connectionId)),
          sk: str(connectionKeys.subscriptionRecord(subscription.subscriptionId)),
          indexPartitions: { SS: indexPartitions },
          ...shared,
        },
      }),
    );
    for (const partition of indexPartitions) {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            pk: str(partition),
            sk: str(connectionKeys.subscriptionIndexSort(connectionId, subscription.subscriptionId)),
            state: str('replaying'),
            ...shared,
          },
        }),
      );
    }
    return true;
  }

  async removeSubscription(tenant: string, connectionId: string, subscriptionId: string): Promise<boolean> {
    const key = { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.subscriptionRecord(subscriptionId)) };
    const result = await this.client.send(new DeleteItemCommand({ TableName: this.options.tableName, Key: key, ReturnValues: 'ALL_OLD' }));
    if (result.Attributes === undefined) return false;
    await deleteKeys(
      this.client,
      this.options.tableName,
      readStringSet(result.Attributes, 'indexPartitions').map((partition) => ({ pk: partition, sk: connectionKeys.subscriptionIndexSort(connectionId, subscriptionId) })),
    );
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
        UpdateExpression: 'ADD subCount :minus',
        ConditionExpression: 'attribute_exists(pk) AND subCount > :zero',
        ExpressionAttributeValues: { ':minus': num(-1), ':zero': num(0) },
      }),
    ).catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
    return true;
  }

  async subscriptionEntries(tenant: string, connectionId: string, subscriptionId: string): Promise<StoredSubscription[]> {
    const owned = await this.client.send(
      new GetItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.subscriptionRecord(subscriptionId)) },
        ConsistentRead: true,
      }),
    );
    const entries: StoredSubscription[] = [];
    for (const partition of readStringSet(owned.Item, 'indexPartitions')) {
      const result = await this.client.send(
        new GetItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(partition), sk: str(connectionKeys.subscriptionIndexSort(connectionId, subscriptionId)) },
          ConsistentRead: true,
        }),
      );
      if (result.Item !== undefined) entries.push(subscriptionOf(result.Item));
    }
    return entries;
  }

  async subscriptionsFor(tenant: string, sessions: readonly string[], typeSegments: readonly string[] = []): Promise<StoredSubscription[]> {
    const partitions = [
      connectionKeys.tenantSubscriptions(tenant),
      ...new Set(sessions.map((session) => connectionKeys.sessionSubscriptions(tenant, session))),
      ...new Set(typeSegments.map((segment) => connectionKeys.typeSubscriptions(tenant, segment))),
    ];
    const results = await Promise.all(partitions.map((partition) => queryAll(this.client, this.options.tableName, partition)));
    return results.flat().map(subscriptionOf);
  }

  async markClosing(entry: StoredSubscription, mark: ClosingMark): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(entry.indexKey.pk), sk: str(entry.indexKey.sk) },
          // The first decision stands: the grace runs from its time, and the positions it named are
          // the ones the consumer is told (a later batch's could lie above what it never got).
          UpdateExpression: mark.delivered === undefined ? 'SET closingSince = if_not_exists(closingSince, :since)' : 'SET closingSince = if_not_exists(closingSince, :since), closingAt = if_not_exists(closingAt, :at)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':since': num(mark.sinceMs), ...(mark.delivered === undefined ? {} : { ':at': str(JSON.stringify(mark.delivered)) }) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * Where a subscription is indexed: under each session it pins; else under each first type
 * segment it names; else in the tenant's unconstrained set, which every batch reads.
 */
function indexPartitionsOf(tenant: string, subscription: NewSubscription): string[] {
  if (subscription.sessions !== undefined) return subscription.sessions.map((session) => connectionKeys.sessionSubscriptions(tenant, session));
  if (subscription.typeSegments !== undefined && subscription.typeSegments.length > 0) {
    return subscription.typeSegments.map((segment) => connectionKeys.typeSubscriptions(tenant, segment));
  }
  return [connectionKeys.tenantSubscriptions(tenant)];
}

function subscriptionOf(item: Item): StoredSubscription {
  const ceiling = readString(item, 'ceiling') as CaptureLevel | undefined;
  return {
    connectionId: readString(item, 'connectionId') ?? '',
    subscriptionId: readString(item, 'subscriptionId') ?? '',
    filter: readString(item, 'filter') ?? '{}',
    ...(ceiling === undefined ? {} : { ceiling }),
    state: (readString(item, 'state') ?? 'live') as SubscriptionState,
    pending: (item.pending?.L ?? []).map((entry) => (entry.S !== undefined ? { raw: entry.S } : { raw: entry.M?.raw?.S ?? '', ...(entry.M?.late?.BOOL === true ? { late: true } : {}), ...(entry.M?.redelivery?.BOOL === true ? { redelivery: true } : {}) })),
    indexKey: { pk: readString(item, 'pk') ?? '', sk: readString(item, 'sk') ?? '' },
    ...closingOf(item),
  };
}

function closingOf(item: Item): { closing?: ClosingMark } {
  const sinceMs = readNumber(item, 'closingSince');
  if (sinceMs === undefined) return {};
  const at = parseJsonObject(readString(item, 'closingAt') ?? '{}');
  const delivered = typeof at.session === 'string' && typeof at.epoch === 'number' && typeof at.seq === 'number' ? { session: at.session, epoch: at.epoch, seq: at.seq } : undefined;
  return { closing: { sinceMs, ...(delivered === undefined ? {} : { delivered }) } };
}

