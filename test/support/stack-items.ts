/**
 * Reading a local stack's events table directly, for tests that check what the log holds (a
 * session's stored events, its late ledger) rather than what a binding delivers.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { eventKeys } from '../../src/store/keys.ts';
import { queryAll } from '../../src/store/table-access.ts';
import { tableNames } from './relay-fixtures.ts';

/** Every item of the `local` tenant's session partition whose sort key starts with `prefix` (`P#` events, `L#` ledger), all pages, strongly consistent. */
export async function sessionItems(dynamoEndpoint: string, session: string, prefix: string): Promise<Array<Record<string, AttributeValue>>> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint: dynamoEndpoint, credentials: LOCAL_CREDENTIALS });
  try {
    return await queryAll(client, tableNames.events, eventKeys.sessionPartition('local', session), prefix);
  } finally {
    client.destroy();
  }
}
