/**
 * The operators a tenant trusts to sign identity cards (AEP-0003 §8.3), kept in the tenants
 * table beside the tenant record: `pk = T#{tenant}`, `sk = OPERATOR#{name}`, the key set as
 * JSON text (`jwks`) or its URL (`jwksUrl`). Public keys only (`relay/identity/key-sets.ts`).
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { OperatorsPort, TrustedOperator } from '../relay/ports/operators.ts';
import { num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';
import { queryAll } from './table-access.ts';

export class OperatorStore implements OperatorsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async listOperators(tenant: string): Promise<TrustedOperator[]> {
    return (await queryAll(this.client, this.tableName, tenantKeys.tenantPartition(tenant), tenantKeys.operatorPrefix)).map(operatorOf);
  }

  async getOperator(tenant: string, name: string): Promise<TrustedOperator | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.operatorRecord(name)) }, ConsistentRead: true }),
    );
    return result.Item === undefined ? undefined : operatorOf(result.Item);
  }

  async putOperator(tenant: string, operator: TrustedOperator): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          pk: str(tenantKeys.tenantPartition(tenant)),
          sk: str(tenantKeys.operatorRecord(operator.name)),
          name: str(operator.name),
          updatedAt: num(operator.updatedAtMs),
          ...(operator.jwks === undefined ? {} : { jwks: str(operator.jwks) }),
          ...(operator.jwksUrl === undefined ? {} : { jwksUrl: str(operator.jwksUrl) }),
        },
      }),
    );
  }

  async deleteOperator(tenant: string, name: string): Promise<boolean> {
    const result = await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.operatorRecord(name)) }, ReturnValues: 'ALL_OLD' }),
    );
    return result.Attributes !== undefined;
  }
}

function operatorOf(item: Item): TrustedOperator {
  const jwks = readString(item, 'jwks');
  const jwksUrl = readString(item, 'jwksUrl');
  return {
    name: readString(item, 'name') ?? '',
    updatedAtMs: readNumber(item, 'updatedAt') ?? 0,
    ...(jwks === undefined ? {} : { jwks }),
    ...(jwksUrl === undefined ? {} : { jwksUrl }),
  };
}
