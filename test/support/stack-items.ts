/**
 * Reading a local stack's events table directly, for tests that check what the log holds (a
 * session's stored events, its late ledger) rather than what a binding delivers.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { tableNames } from './relay-fixtures.ts';

/** Every item of the `local` tenant's session partition whose sort key starts with `prefix` (`P#` events, `L#` ledger), all pages, strongly consistent. */
export async function sessionItems(dynamoEndpoint: string, session: string, prefix: string): Promise<Array<Record<string, AttributeValue>>> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint: dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  const items: Array<Record<string, AttributeValue>> = [];
  let startKey: Record<string, AttributeValue> | undefined;
  try {
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableNames.events,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': { S: `T#local#S#${session}` }, ':prefix': { S: prefix } },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  } finally {
    client.destroy();
  }
  return items;
}
