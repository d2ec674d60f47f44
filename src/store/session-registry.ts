/** The tenant's registry of sessions it holds history for (`session` items in the events table), which replay-all walks (AEP-0003 §5). */
import { GetItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Page } from '../relay/domain/stored-event.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { clampLimit, decodeCursor, pageOf } from './pages.ts';

/** An item expiring no more than this before what an append needs is left as it is (a day: retention is counted in days). */
const REWRITE_SLACK_SECONDS = 86_400;

export interface SessionRegistryOptions {
  tableName: string;
  /**
   * How long this process trusts that a session is already registered before refreshing it
   * (saves one write per event on a warm container).
   */
  refreshMs: number;
}

export class SessionRegistry {
  private readonly registeredAt = new Map<string, number>();
  /** Registry writes in flight, by session: concurrent appends wait for the same one. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: SessionRegistryOptions,
  ) {}

  /**
   * Keeps the session in the tenant's registry until `expiresAtSec` (its newest event's expiry),
   * plus `refreshMs` for the events this process stores before it refreshes again; refreshed at
   * most once per `refreshMs` per process. The expiry only ever moves later: a tenant whose
   * retention was lowered still has older events that need the item (replay-all lists the
   * session from it, and replay reads the session's top on it). Concurrent appends of one
   * session (pipelined frames) share one write in flight.
   *
   * A process that has not registered the session reads the item first (eventually consistent,
   * half a read unit) and writes only when it is missing or would expire too soon: on AWS each
   * frame of a pipelined burst may run in an instance of its own, and a write each would cost a
   * write unit per event (a read unit is a fifth of a write unit's price, and this is half one).
   */
  async register(tenant: string, session: string, nowMs: number, expiresAtSec: number): Promise<void> {
    const cacheKey = `${tenant}\u0000${session}`;
    const last = this.registeredAt.get(cacheKey);
    if (last !== undefined && nowMs - last < this.options.refreshMs) return;
    const inFlight = this.writing.get(cacheKey);
    if (inFlight !== undefined) return inFlight;
    const needed = expiresAtSec + Math.ceil(this.options.refreshMs / 1000);
    const write = this.client
      .send(new GetItemCommand({ TableName: this.options.tableName, Key: { pk: str(eventKeys.sessionRegistryPartition(tenant)), sk: str(session) }, ProjectionExpression: 'expiresAt' }))
      .then(({ Item: item }) => ((readNumber(item, 'expiresAt') ?? 0) >= needed - REWRITE_SLACK_SECONDS ? undefined : this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(eventKeys.sessionRegistryPartition(tenant)), sk: str(session) },
          UpdateExpression: 'SET kind = :kind, lastSeen = :now, expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(expiresAt) OR expiresAt <= :expires',
          ExpressionAttributeValues: {
            ':kind': str('session'),
            ':now': num(nowMs),
            ':expires': num(needed),
          },
        }),
      )))
      .catch((error: unknown) => {
        // Registered already, until later than this would.
        if (!isConditionFailure(error)) throw error;
      })
      .then(() => {
        if (this.registeredAt.size > 10_000) this.registeredAt.clear();
        this.registeredAt.set(cacheKey, nowMs);
      })
      .finally(() => this.writing.delete(cacheKey));
    this.writing.set(cacheKey, write);
    return write;
  }

  /** Sessions the tenant holds history for, one bounded page at a time. */
  async list(tenant: string, limit: number, cursor?: string): Promise<Page<string>> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
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
