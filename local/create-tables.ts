/**
 * Creates the relay's tables on DynamoDB Local from the shared definitions
 * (`src/store/table-definitions.ts`), the same ones the CDK stack deploys.
 */
import { CreateTableCommand, DescribeTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_DEFINITIONS } from '../src/store/table-definitions.ts';
import type { TableDefinition, TableNames } from '../src/store/table-definitions.ts';

export function localTableNames(prefix: string): TableNames {
  return { events: `${prefix}-events`, connections: `${prefix}-connections`, tenants: `${prefix}-tenants` };
}

export function tableNameOf(definition: TableDefinition, names: TableNames): string {
  switch (definition.id) {
    case 'Events':
      return names.events;
    case 'Connections':
      return names.connections;
    case 'Tenants':
      return names.tenants;
  }
}

export async function createTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const definition of TABLE_DEFINITIONS) {
    const tableName = tableNameOf(definition, names);
    if (await tableExists(client, tableName)) continue;
    const keyAttributes = [
      definition.partitionKey,
      definition.sortKey,
      ...definition.localIndexes.map((index) => index.sortKey),
      ...definition.globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
    ];
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: keyAttributes.map((attribute) => ({ AttributeName: attribute.name, AttributeType: attribute.type })),
        KeySchema: [
          { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
        ],
        ...(definition.localIndexes.length === 0
          ? {}
          : {
              LocalSecondaryIndexes: definition.localIndexes.map((index) => ({
                IndexName: index.indexName,
                KeySchema: [
                  { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
                  { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
                ],
                Projection: { ProjectionType: index.projection },
              })),
            }),
        ...(definition.globalIndexes.length === 0
          ? {}
          : {
              GlobalSecondaryIndexes: definition.globalIndexes.map((index) => ({
                IndexName: index.indexName,
                KeySchema: [
                  { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
                  { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
                ],
                Projection: { ProjectionType: index.projection },
              })),
            }),
        ...(definition.streamNewImages ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } } : {}),
      }),
    );
    if (definition.timeToLiveAttribute !== undefined) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { Enabled: true, AttributeName: definition.timeToLiveAttribute },
        }),
      );
    }
  }
}

async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') return false;
    throw error;
  }
}
