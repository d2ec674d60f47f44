/**
 * The key that signs history and session-listing cursors, held in the tenants table so every
 * process of a deployment shares it with no extra infrastructure. The first process to need
 * it creates it (conditional put: concurrent creators agree on the one that landed); after
 * that it is one read per process.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import type { CursorKeysPort } from '../relay/ports/cursor-keys.ts';
import { isConditionFailure, str } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export class CursorKeyStore implements CursorKeysPort {
  private key: Promise<Uint8Array> | undefined;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  cursorKey(): Promise<Uint8Array> {
    this.key ??= this.load().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private async load(): Promise<Uint8Array> {
    const key = { pk: str(tenantKeys.relaySecretsPartition), sk: str(tenantKeys.cursorKeyRecord) };
    const existing = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    const stored = existing.Item?.secret;
    if (stored !== undefined && 'B' in stored && stored.B !== undefined) return stored.B;
    const fresh = randomBytes(32);
    try {
      await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: { ...key, secret: { B: fresh } }, ConditionExpression: 'attribute_not_exists(pk)' }));
      return fresh;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return this.load();
    }
  }
}
