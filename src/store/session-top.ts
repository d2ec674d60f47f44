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
import type { Item } from './attribute-values.ts';
import { eventKeys } from './keys.ts';

/** What `topBefore` holds when the session had no top before its newest folded batch. */
export const NO_TOP = '';

export async function readSessionTop(client: DynamoDBClient, tableName: string, tenant: string, session: string): Promise<SessionTop> {
  const { Item: item } = await client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: str(eventKeys.sessionRegistryPartition(tenant)), sk: str(session) },
      ProjectionExpression: 'topKey, topBefore, watermark',
      ConsistentRead: true,
    }),
  );
  return sessionTopOf(item);
}

/** The session top as a summary item holds it. */
export function sessionTopOf(item: Item | undefined): SessionTop {
  const watermark = readString(item, 'watermark');
  const topBefore = readString(item, 'topBefore');
  return {
    top: readString(item, 'topKey') ?? null,
    ...(watermark === undefined ? {} : { watermark }),
    ...(topBefore === undefined ? {} : { topBefore: topBefore === NO_TOP ? null : topBefore }),
  };
}
