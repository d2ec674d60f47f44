/**
 * The replay handoff's state on subscription index entries (`subscription-handoff.ts` in the
 * relay): events fan-out parks while a subscription replays, and the conditional flip to live.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CoveredPosition, ParkedEvent, StoredSubscription } from '../relay/domain/subscription.ts';
import type { ParkingPort } from '../relay/ports/parking.ts';
import { isConditionFailure, num, str } from './attribute-values.ts';

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

  async parkPending(subscription: StoredSubscription, parked: ParkedEvent): Promise<boolean> {
    const { raw } = parked;
    // A plain string is an event to deliver unless the consumer has that very position; a map
    // marks one stored in order (`ParkedEvent.inOrder`).
    const entry: AttributeValue = parked.inOrder ? { M: { raw: str(raw), inOrder: { BOOL: true } } } : str(raw);
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
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async goLive(subscription: StoredSubscription, drained: number, covered?: Readonly<Record<string, CoveredPosition>>): Promise<boolean> {
    const coveredText = covered === undefined || Object.keys(covered).length === 0 ? undefined : JSON.stringify(covered);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(subscription.indexKey.pk), sk: str(subscription.indexKey.sk) },
          UpdateExpression: coveredText === undefined ? 'SET #state = :live REMOVE pending, pendingBytes' : 'SET #state = :live, covered = :covered REMOVE pending, pendingBytes',
          ConditionExpression: drained === 0 ? 'attribute_not_exists(pending)' : 'size(pending) = :drained',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':live': str('live'),
            ...(drained === 0 ? {} : { ':drained': num(drained) }),
            ...(coveredText === undefined ? {} : { ':covered': str(coveredText) }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
