/**
 * The tenant registry: one record per tenant (its state, and the control policy and quotas
 * kept on it) plus a registry partition listing every tenant for the operator.
 * Tokens: `token-store.ts`; the control policy: `control-policy-store.ts`.
 */
import { GetItemCommand, PutItemCommand, QueryCommand, TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TenantRecord } from '../relay/domain/tenant.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { TenantsPort } from '../relay/ports/tenants.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export class TenantStore implements TenantsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
    /**
     * Told after a tenant's state changed, before the change is reported done: the token lookups
     * carry a copy of it, so resolving a token takes one read (`token-store.ts`).
     */
    private readonly onDisabledChanged?: (tenant: string, disabled: boolean) => Promise<void>,
  ) {}

  /** Creates a tenant; returns false when it already exists. */
  async createTenant(tenant: string): Promise<boolean> {
    const createdAt = num(this.now());
    try {
      await this.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord), tenant: str(tenant), createdAt, disabled: { BOOL: false } },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: { TableName: this.tableName, Item: { pk: str(tenantKeys.tenantRegistryPartition), sk: str(tenant), createdAt } } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof Error && error.name === 'TransactionCanceledException') return false;
      throw error;
    }
  }

  async getTenant(tenant: string): Promise<TenantRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
        ConsistentRead: true,
      }),
    );
    if (result.Item === undefined) return undefined;
    const controlPolicy = readString(result.Item, 'controlPolicy');
    return {
      tenant,
      createdAtMs: readNumber(result.Item, 'createdAt') ?? 0,
      disabled: result.Item.disabled?.BOOL === true,
      ...(controlPolicy === undefined ? {} : { controlPolicy }),
    };
  }

  /** Every tenant in the registry, oldest id first (the operator's listing). */
  async listTenants(): Promise<TenantRecord[]> {
    const names: string[] = [];
    let start: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': str(tenantKeys.tenantRegistryPartition) },
          ProjectionExpression: 'sk',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const name = readString(item, 'sk');
        if (name !== undefined) names.push(name);
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    // The registry holds names only; each tenant record is the truth for its state.
    const records = await Promise.all(names.map((name) => this.getTenant(name)));
    return records.filter((record): record is TenantRecord => record !== undefined);
  }

  /** Disables or re-enables a tenant; returns false when there is no such tenant. */
  async setTenantDisabled(tenant: string, disabled: boolean): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
          UpdateExpression: 'SET disabled = :disabled',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':disabled': { BOOL: disabled } },
        }),
      );
      await this.onDisabledChanged?.(tenant, disabled);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }


  /** Writes a fixed tenant record directly (bootstrap of the local stack). */
  async ensureTenant(tenant: string): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord), tenant: str(tenant), createdAt: num(this.now()), disabled: { BOOL: false } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      await this.client.send(
        new PutItemCommand({ TableName: this.tableName, Item: { pk: str(tenantKeys.tenantRegistryPartition), sk: str(tenant), createdAt: num(this.now()) } }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
