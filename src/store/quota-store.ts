/**
 * Quota state: the tenant's quota settings (stored on its tenant record, cached briefly per
 * process so enforcing them costs no read per request) and the counters that enforce them
 * (in the connections table): open connections per tenant, events per second per tenant.
 * Counters move by conditional updates, so concurrent requests never overshoot a quota.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import type { QuotasPort } from '../relay/ports/quotas.ts';
import type { TenantQuotas } from '../relay/tenant-quotas.ts';
import { parseTenantQuotas } from '../relay/tenant-quotas.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export interface QuotaStoreOptions {
  tenantsTable: string;
  connectionsTable: string;
  now: Clock;
  /** How long a process trusts the quotas it read. */
  cacheMs: number;
}

const counterPartition = (tenant: string) => `T#${tenant}#COUNTERS`;

export class QuotaStore implements QuotasPort {
  private readonly cache = new Map<string, { quotas: TenantQuotas; readAt: number }>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: QuotaStoreOptions,
  ) {}

  async quotasOf(tenant: string): Promise<TenantQuotas> {
    const cached = this.cache.get(tenant);
    if (cached !== undefined && this.options.now() - cached.readAt < this.options.cacheMs) return cached.quotas;
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.options.tenantsTable,
        Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
        ProjectionExpression: 'quotas',
      }),
    );
    const text = readString(result.Item, 'quotas');
    let quotas: TenantQuotas = {};
    if (text !== undefined) {
      try {
        const parsed = parseTenantQuotas(JSON.parse(text));
        if (parsed.ok) quotas = parsed.quotas;
      } catch {
        quotas = {};
      }
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(tenant, { quotas, readAt: this.options.now() });
    return quotas;
  }

  async setQuotas(tenant: string, quotas: TenantQuotas): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tenantsTable,
          Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
          UpdateExpression: 'SET quotas = :quotas',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':quotas': str(JSON.stringify(quotas)) },
        }),
      );
      this.cache.delete(tenant);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Takes one connection slot; false when the tenant is at `max`. */
  async acquireConnection(tenant: string, max: number): Promise<boolean> {
    return this.add(counterPartition(tenant), 'connections', 1, max);
  }

  async releaseConnection(tenant: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: { pk: str(counterPartition(tenant)), sk: str('connections') },
          UpdateExpression: 'ADD #n :minus',
          ConditionExpression: '#n > :zero',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':minus': num(-1), ':zero': num(0) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** Counts `count` events against this second's window; false when that would pass `perSecond`. */
  async admitEvents(tenant: string, count: number, perSecond: number): Promise<boolean> {
    const second = Math.floor(this.options.now() / 1000);
    return this.add(counterPartition(tenant), `rate#${second}`, count, perSecond, second + 120);
  }

  private async add(pk: string, sk: string, count: number, max: number, expiresAt?: number): Promise<boolean> {
    if (count > max) return false;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: { pk: str(pk), sk: str(sk) },
          UpdateExpression: expiresAt === undefined ? 'ADD #n :count' : 'ADD #n :count SET expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(#n) OR #n <= :room',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':count': num(count), ':room': num(max - count), ...(expiresAt === undefined ? {} : { ':expires': num(expiresAt) }) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
