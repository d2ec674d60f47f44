/**
 * A tenant's Web Push subscriptions in the tenants table, one partition per tenant
 * (`T#{tenant}#PUSH`): each subscription an item (`SUB#{id}`, the record as JSON), and beside
 * them the short-lived notes of which subscriptions were sent a request (`SENT#{request}#{id}`,
 * expiring by TTL; reads skip expired ones, since TTL deletion lags).
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import type { PushSubscriptionRecord } from '../relay/push/push-subscription.ts';
import type { PushSubscriptionsPort } from '../relay/push/push-subscriptions-port.ts';
import { num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';
import { queryAll } from './table-access.ts';

export class PushSubscriptionStore implements PushSubscriptionsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
  ) {}

  async list(tenant: string): Promise<PushSubscriptionRecord[]> {
    const items = await queryAll(this.client, this.tableName, tenantKeys.pushPartition(tenant), tenantKeys.pushSubscriptionPrefix);
    return items.flatMap((item) => recordOf(item) ?? []);
  }

  async get(tenant: string, id: string): Promise<PushSubscriptionRecord | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.pushSubscriptionRecord(id)), ConsistentRead: true }));
    return result.Item === undefined ? undefined : recordOf(result.Item);
  }

  async put(tenant: string, record: PushSubscriptionRecord): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: { ...this.key(tenant, tenantKeys.pushSubscriptionRecord(record.id)), record: str(JSON.stringify(record)) } }));
  }

  async remove(tenant: string, id: string): Promise<boolean> {
    const result = await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.pushSubscriptionRecord(id)), ReturnValues: 'ALL_OLD' }));
    return result.Attributes !== undefined;
  }

  async markNotified(tenant: string, session: string, requestId: string, subscriptionIds: readonly string[], expiresAtMs: number): Promise<void> {
    const prefix = tenantKeys.pushNotifiedPrefix(session, requestId);
    await Promise.all(
      subscriptionIds.map((id) =>
        this.client.send(
          new PutItemCommand({ TableName: this.tableName, Item: { ...this.key(tenant, `${prefix}${id}`), subscription: str(id), expiresAt: num(Math.ceil(expiresAtMs / 1000)) } }),
        ),
      ),
    );
  }

  async notified(tenant: string, session: string, requestId: string): Promise<string[]> {
    const nowSeconds = this.now() / 1000;
    const items = await queryAll(this.client, this.tableName, tenantKeys.pushPartition(tenant), tenantKeys.pushNotifiedPrefix(session, requestId));
    return items.filter((item) => (readNumber(item, 'expiresAt') ?? 0) > nowSeconds).flatMap((item) => readString(item, 'subscription') ?? []);
  }

  private key(tenant: string, sort: string) {
    return { pk: str(tenantKeys.pushPartition(tenant)), sk: str(sort) };
  }
}

function recordOf(item: Item): PushSubscriptionRecord | undefined {
  const text = readString(item, 'record');
  if (text === undefined) return undefined;
  return JSON.parse(text) as PushSubscriptionRecord;
}
