/**
 * A session's top as fan-out left it (`session-summaries.ts`): the highest order key whose
 * late arrivals, and those of everything stored before it, are on record. Replay and stream
 * catch-up serve nothing above it; fan-out delivers what lies above live (AEP-0003 §7).
 *
 * Strongly consistent, one read unit (the registry item is well under 4 KB).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SessionTop } from '../relay/domain/history.ts';
import { readString, str } from './attribute-values.ts';
import { eventKeys } from './keys.ts';

export async function readSessionTop(client: DynamoDBClient, tableName: string, tenant: string, session: string): Promise<SessionTop> {
  const { Item: item } = await client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: str(eventKeys.sessionRegistryPartition(tenant)), sk: str(session) },
      ProjectionExpression: 'topKey, watermark',
      ConsistentRead: true,
    }),
  );
  const watermark = readString(item, 'watermark');
  return { top: readString(item, 'topKey') ?? null, ...(watermark === undefined ? {} : { watermark }) };
}
