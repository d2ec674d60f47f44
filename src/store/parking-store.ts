/**
 * The replay handoff's state on subscription index entries (`subscription-handoff.ts` in the
 * relay): events fan-out parks while a subscription replays, and the conditional flip to live.
 */
import { TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ParkedEvent, StoredSubscription } from '../relay/domain/subscription.ts';
import type { DrainedEntry, ParkingPort, ParkOutcome } from '../relay/ports/parking.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';

/** TransactWriteItems takes at most 100 actions. */
const TRANSACTION_LIMIT = 100;

export interface ParkingStoreOptions {
  tableName: string;
  /** Bound on what fan-out parks for a replaying subscription before delivering directly. */
  maxPendingBytes: number;
}

export class ParkingStore implements ParkingPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: ParkingStoreOptions,
  ) {}

  async parkPending(subscription: StoredSubscription, parked: ParkedEvent): Promise<ParkOutcome> {
    const { raw } = parked;
    // A plain string is an event as released; a map carries its flags (`ParkedEvent`).
    const flagged = parked.late === true || parked.redelivery === true;
    const entry: AttributeValue = flagged ? { M: { raw: str(raw), ...(parked.late === true ? { late: { BOOL: true } } : {}), ...(parked.redelivery === true ? { redelivery: { BOOL: true } } : {}) } } : str(raw);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(subscription.indexKey.pk), sk: str(subscription.indexKey.sk) },
          UpdateExpression: 'SET pending = list_append(if_not_exists(pending, :empty), :one), pendingBytes = if_not_exists(pendingBytes, :zero) + :bytes',
          ConditionExpression: '#state = :replaying AND (attribute_not_exists(pendingBytes) OR pendingBytes < :max)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':empty': { L: [] },
            ':one': { L: [entry] },
            ':zero': num(0),
            ':bytes': num(Buffer.byteLength(raw)),
            ':replaying': str('replaying'),
            ':max': num(this.options.maxPendingBytes),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'parked';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Still replaying: the refusal was for space. No entry: the subscription is gone.
      if (error.Item === undefined) return 'gone';
      return readString(error.Item, 'state') === 'replaying' ? 'full' : 'not-replaying';
    }
  }

  async goLive(entries: readonly DrainedEntry[]): Promise<boolean> {
    const updates = entries.map(({ subscription, drained }) => ({
      TableName: this.options.tableName,
      Key: { pk: str(subscription.indexKey.pk), sk: str(subscription.indexKey.sk) },
      UpdateExpression: 'SET #state = :live REMOVE pending, pendingBytes',
      // `attribute_exists(pk)`: an entry its connection's `$disconnect` deleted meanwhile stays
      // deleted (an update would create it again, without its connection or expiry, for good).
      ConditionExpression: drained === 0 ? 'attribute_exists(pk) AND attribute_not_exists(pending)' : 'attribute_exists(pk) AND size(pending) = :drained',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':live': str('live'),
        ...(drained === 0 ? {} : { ':drained': num(drained) }),
      },
    }));
    try {
      if (updates.length === 1) await this.client.send(new UpdateItemCommand(updates[0] as NonNullable<(typeof updates)[0]>));
      else {
        // All entries at once: an entry flipped alone would send its live events before what
        // another entry still has parked, some of which may be below them (a transaction holds
        // 100 items; past that, the flips go 100 at a time).
        for (let start = 0; start < updates.length; start += TRANSACTION_LIMIT) {
          await this.client.send(new TransactWriteItemsCommand({ TransactItems: updates.slice(start, start + TRANSACTION_LIMIT).map((Update) => ({ Update })) }));
        }
      }
      return true;
    } catch (error) {
      if (isConditionFailure(error) || (error instanceof Error && error.name === 'TransactionCanceledException')) return false;
      throw error;
    }
  }
}
