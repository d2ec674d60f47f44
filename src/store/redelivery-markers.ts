/**
 * Redelivery markers (`redelivery` items in the events table): one short-lived item per
 * duplicate that arrives. A duplicate writes nothing to the log, so it would produce no stream
 * record; the marker's insert does, and the one fan-out path forwards it live as received
 * (AEP-0003 §5) while the log keeps one copy.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { IdMinter } from '../relay/ports/ids.ts';
import { num, str } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { expiresAfter } from './table-access.ts';

export interface RedeliveryMarkerOptions {
  tableName: string;
  /** Markers live only long enough to be streamed. */
  lifetimeSeconds: number;
  mintId: IdMinter;
}

export class RedeliveryMarkers {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: RedeliveryMarkerOptions,
  ) {}

  /** `via`: the emitter connection the retransmit came on (its claim is recorded from it, `StoredAnnotations.via`). */
  async write(tenant: string, raw: string, nowMs: number, via?: string): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(eventKeys.redeliveryPartition(tenant)),
          sk: str(this.options.mintId()),
          kind: str('redelivery'),
          raw: str(raw),
          ...(via === undefined ? {} : { via: str(via) }),
          expiresAt: num(expiresAfter(nowMs, this.options.lifetimeSeconds)),
        },
      }),
    );
  }
}
