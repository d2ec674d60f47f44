/**
 * A tenant's bridge sinks, kept as one item beside its tenant record (`T#{tenant}` /
 * `BRIDGES`): the public settings and each sink's sealed secrets, never a plaintext secret.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BridgeSinksPort, StoredSink } from '../relay/bridges/bridge-sinks-port.ts';
import { readString, str } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export class BridgeSinkStore implements BridgeSinksPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async getSinks(tenant: string): Promise<StoredSink[]> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(tenant), ConsistentRead: true }));
    const text = readString(result.Item, 'sinks');
    if (text === undefined) return [];
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as StoredSink[]) : [];
  }

  async putSinks(tenant: string, sinks: readonly StoredSink[]): Promise<void> {
    if (sinks.length === 0) {
      await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(tenant) }));
      return;
    }
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: { ...this.key(tenant), sinks: str(JSON.stringify(sinks)) } }));
  }

  private key(tenant: string) {
    return { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.bridgesRecord) };
  }
}
