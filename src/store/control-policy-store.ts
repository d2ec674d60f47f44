/**
 * The tenant's control ACL (AEP-0004 §4.1), kept on its tenant record as validated JSON text;
 * routing reads it per command, the admin API replaces it.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ControlPoliciesPort } from '../relay/ports/control-policies.ts';
import { isConditionFailure, readString, str } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export class ControlPolicyStore implements ControlPoliciesPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async controlPolicyOf(tenant: string): Promise<string | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
        ConsistentRead: true,
      }),
    );
    return readString(result.Item, 'controlPolicy');
  }

  /** Sets (or, with undefined, clears) the tenant's control ACL, stored as validated JSON text. */
  async setControlPolicy(tenant: string, policyJson: string | undefined): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tenantRecord) },
          UpdateExpression: policyJson === undefined ? 'REMOVE controlPolicy' : 'SET controlPolicy = :policy',
          ConditionExpression: 'attribute_exists(pk)',
          ...(policyJson === undefined ? {} : { ExpressionAttributeValues: { ':policy': str(policyJson) } }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
