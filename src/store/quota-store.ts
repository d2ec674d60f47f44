/**
 * Quota state: the tenant's quota settings (stored on its tenant record, cached briefly per
 * process so enforcing them costs no read per request) and the counters that enforce them
 * (in the connections table): open connections per tenant, events per second per tenant.
 * Counters move by conditional updates, so concurrent requests never overshoot a quota.
 * Each held connection slot is also a lease item next to the counter, so slots whose
 * `$disconnect` or cleanup never ran can be found and the counter recounted
 * (src/relay/connection-slots.ts).
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import { slotPoolOf } from '../relay/ports/quotas.ts';
import type { ConnectionLease, QuotasPort, SlotCount } from '../relay/ports/quotas.ts';
import type { TenantQuotas } from '../relay/domain/tenant-quotas.ts';
import { parseTenantQuotas } from '../relay/domain/tenant-quotas.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export interface QuotaStoreOptions {
  tenantsTable: string;
  connectionsTable: string;
  now: Clock;
  /** How long a process trusts the quotas it read. */
  cacheMs: number;
}

/**
 * A tenant's counters; a tenant's stream share beside them in a partition of its own, and
 * each shard of the deployment's stream pool in one of its own (not a tenant's data), so the
 * pool's takes, renewals and releases are spread over as many partitions as it has shards.
 */
function counterPartition(pool: string): string {
  const named = slotPoolOf(pool);
  switch (named.kind) {
    case 'streams-shard':
      return `DEPLOYMENT#LIVE-STREAMS#${named.shard}`;
    case 'tenant-streams':
      return `T#${named.tenant}#STREAMS`;
    case 'tenant':
      return `T#${named.tenant}#COUNTERS`;
  }
}
/** The connection counter's sort key; each held slot is a lease item beside it (`SLOT#{connectionId}`). */
const CONNECTIONS = 'connections';
const SLOT_PREFIX = 'SLOT#';
/**
 * Lease items outlive their lease by a day before TTL removes them: a recount, not TTL, is
 * what frees a lost slot (it sets the counter from the leases it finds).
 */
const leaseExpiry = (leaseUntilMs: number) => Math.ceil(leaseUntilMs / 1000) + 86_400;

function leaseKey(tenant: string, connectionId: string): Item {
  return { pk: str(counterPartition(tenant)), sk: str(`${SLOT_PREFIX}${connectionId}`) };
}

function leaseItem(tenant: string, lease: ConnectionLease): Item {
  return {
    ...leaseKey(tenant, lease.connectionId),
    kind: str(lease.kind),
    acquiredAt: num(lease.acquiredAtMs),
    leaseUntil: num(lease.leaseUntilMs),
    expiresAt: num(leaseExpiry(lease.leaseUntilMs)),
  };
}

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

  /**
   * Takes a slot: the lease first, then the counter below `max`; a refused counter removes the
   * lease again. Lease first, so a recount that runs in between counts one slot too many
   * (refusing at worst one connection, until the next recount) and never one too few.
   */
  async acquireConnection(tenant: string, max: number, lease: ConnectionLease): Promise<boolean> {
    await this.client.send(new PutItemCommand({ TableName: this.options.connectionsTable, Item: leaseItem(tenant, lease) }));
    if (await this.add(counterPartition(tenant), CONNECTIONS, 1, max)) return true;
    await this.client.send(new DeleteItemCommand({ TableName: this.options.connectionsTable, Key: leaseKey(tenant, lease.connectionId) }));
    return false;
  }

  async renewConnection(tenant: string, connectionId: string, leaseUntilMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: leaseKey(tenant, connectionId),
          UpdateExpression: 'SET leaseUntil = :until, expiresAt = :expires',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':until': num(leaseUntilMs), ':expires': num(leaseExpiry(leaseUntilMs)) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** The counter moves only when this call removed the lease, so a second release (or one after a recount dropped the lease) changes nothing. */
  async releaseConnection(tenant: string, connectionId: string): Promise<void> {
    const removed = await this.client.send(
      new DeleteItemCommand({ TableName: this.options.connectionsTable, Key: leaseKey(tenant, connectionId), ReturnValues: 'ALL_OLD' }),
    );
    if (removed.Attributes === undefined) return;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: { pk: str(counterPartition(tenant)), sk: str(CONNECTIONS) },
          UpdateExpression: 'ADD #n :minus, #v :one',
          ConditionExpression: '#n > :zero',
          ExpressionAttributeNames: { '#n': 'n', '#v': 'v' },
          ExpressionAttributeValues: { ':minus': num(-1), ':one': num(1), ':zero': num(0) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async slotCount(tenant: string): Promise<SlotCount> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.options.connectionsTable, Key: { pk: str(counterPartition(tenant)), sk: str(CONNECTIONS) }, ConsistentRead: true }),
    );
    return { count: readNumber(Item, 'n') ?? 0, version: readNumber(Item, 'v') ?? 0, recountedAtMs: readNumber(Item, 'recountedAt') ?? 0 };
  }

  async connectionLeases(tenant: string): Promise<ConnectionLease[]> {
    const leases: ConnectionLease[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.options.connectionsTable,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :slot)',
          ExpressionAttributeValues: { ':pk': str(counterPartition(tenant)), ':slot': str(SLOT_PREFIX) },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      for (const item of page.Items ?? []) {
        const kind = readString(item, 'kind');
        leases.push({
          connectionId: (readString(item, 'sk') ?? '').slice(SLOT_PREFIX.length),
          kind: kind === 'stream' ? 'stream' : 'socket',
          acquiredAtMs: readNumber(item, 'acquiredAt') ?? 0,
          leaseUntilMs: readNumber(item, 'leaseUntil') ?? 0,
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return leases;
  }

  async recountConnections(tenant: string, lost: readonly ConnectionLease[], liveCount: number, version: number): Promise<boolean> {
    for (const lease of lost) {
      try {
        await this.client.send(
          new DeleteItemCommand({
            TableName: this.options.connectionsTable,
            Key: leaseKey(tenant, lease.connectionId),
            // A stream that renewed meanwhile keeps its slot.
            ConditionExpression: 'leaseUntil = :seen',
            ExpressionAttributeValues: { ':seen': num(lease.leaseUntilMs) },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: { pk: str(counterPartition(tenant)), sk: str(CONNECTIONS) },
          UpdateExpression: 'SET #n = :live, recountedAt = :now ADD #v :one',
          ConditionExpression: version === 0 ? 'attribute_not_exists(#v) OR #v = :version' : '#v = :version',
          ExpressionAttributeNames: { '#n': 'n', '#v': 'v' },
          ExpressionAttributeValues: { ':live': num(liveCount), ':now': num(this.options.now()), ':one': num(1), ':version': num(version) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Counts `count` events against second `second`'s window; false when that would pass `perSecond`. */
  async admitEvents(tenant: string, count: number, perSecond: number, second: number): Promise<boolean> {
    return this.add(counterPartition(tenant), `rate#${second}`, count, perSecond, second + 120);
  }

  private async add(pk: string, sk: string, count: number, max: number, expiresAt?: number): Promise<boolean> {
    if (count > max) return false;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.connectionsTable,
          Key: { pk: str(pk), sk: str(sk) },
          // The connection counter's version moves with it (see recountConnections); a rate window has none.
          UpdateExpression: expiresAt === undefined ? 'ADD #n :count, v :one' : 'ADD #n :count SET expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(#n) OR #n <= :room',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':count': num(count), ':room': num(max - count), ...(expiresAt === undefined ? { ':one': num(1) } : { ':expires': num(expiresAt) }) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
