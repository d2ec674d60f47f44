/**
 * Reading one session's history back in position order, with strongly consistent queries and
 * no index: the session's partition holds its sequenced events under `P#{position}` (key order
 * is `(epoch, seq)` order) and its seq-less events under `E#{source}#{id}` with their place in
 * a `pos` attribute (`{anchor}~{arrival}`, `position-key.ts`). A read takes the `P#` range in
 * key order and merges in the seq-less items, which are few (commands, `attention.routed`),
 * sorted by `pos`; the result is the order the former position index gave, and "strictly after
 * P" keeps meaning "`pos` greater than P's key" for both kinds.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys, POSITIONED_END, POSITIONED_PREFIX, UNPOSITIONED_PREFIX } from './keys.ts';
import type { SenderVerified } from '../relay/domain/stored-event.ts';
import { readSenderVerified, SENDER_VERIFIED } from './sender-verified.ts';
import { readPerson } from './person-attribute.ts';
import type { Person } from '../auth/oidc/person.ts';

/** One event read back, with the key it sorts under (`position-key.ts`). */
export interface PositionedItem {
  raw: string;
  positionKey: string;
  /** When it was stored (ms), where the read asked for it. */
  storedAtMs?: number;
  /** A command's `senderVerified` (seq-less items only: commands are never sequenced). */
  senderVerified?: SenderVerified;
  /** A command's signed-in sender (`StoredAnnotations.sentBy`). */
  sentBy?: Person;
}

function storedAtOf(record: Item): { storedAtMs?: number } {
  const storedAtMs = readNumber(record, 'storedAt');
  return storedAtMs === undefined ? {} : { storedAtMs };
}

export interface RangeQuery {
  /** Only items whose position key is strictly greater (absent: from the start). */
  afterKey?: string;
  /** Only sequenced items whose position key is strictly smaller (absent: to the end). */
  beforeKey?: string;
  newestFirst: boolean;
  /** Most positioned items to read (DynamoDB `Limit`, counted before `sinceMs` filters). */
  limit: number;
  /** Only items stored at or after this time (ms). */
  sinceMs?: number;
}

export class SessionHistory {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /**
   * Up to `limit` positioned items in key order, plus every seq-less item that qualifies,
   * merged; `more` says the positioned range went on past what was read.
   */
  async read(tenant: string, session: string, query: RangeQuery): Promise<{ items: PositionedItem[]; more: boolean }> {
    const [positioned, seqLess] = await Promise.all([this.positioned(tenant, session, query), this.seqLess(tenant, session, query)]);
    const items = [...positioned.items, ...seqLess];
    items.sort((a, b) => (a.positionKey < b.positionKey ? -1 : a.positionKey > b.positionKey ? 1 : 0));
    if (query.newestFirst) items.reverse();
    return { items, more: positioned.more };
  }

  /** Sequenced items strictly between two position keys, at most `limit`, from the low end (or the high end, newest first). */
  async positionedBetween(tenant: string, session: string, afterKey: string | undefined, beforeKey: string, limit: number, newestFirst: boolean): Promise<PositionedItem[]> {
    const { items } = await this.positioned(tenant, session, { ...(afterKey === undefined ? {} : { afterKey }), beforeKey, newestFirst, limit });
    return items;
  }

  /** The newest sequenced position key of the session, or undefined when it has none. */
  async newestPositionKey(tenant: string, session: string): Promise<string | undefined> {
    const { items } = await this.positioned(tenant, session, { newestFirst: true, limit: 1 });
    return items[0]?.positionKey;
  }

  private async positioned(tenant: string, session: string, query: RangeQuery): Promise<{ items: PositionedItem[]; more: boolean }> {
    const items: PositionedItem[] = [];
    let startKey: Item | undefined;
    do {
      const page: QueryCommandOutput = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          // "Strictly after": the smallest key above `P#{after}` is that key followed by U+0000.
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ...(query.sinceMs === undefined ? {} : { FilterExpression: 'storedAt >= :since' }),
          ExpressionAttributeValues: {
            ':pk': str(eventKeys.sessionPartition(tenant, session)),
            ':low': str(query.afterKey === undefined ? POSITIONED_PREFIX : `${POSITIONED_PREFIX}${query.afterKey}\u0000`),
            ':high': str(query.beforeKey === undefined ? POSITIONED_END : `${POSITIONED_PREFIX}${query.beforeKey}`),
            ...(query.sinceMs === undefined ? {} : { ':since': num(query.sinceMs) }),
          },
          // `raw` is a DynamoDB reserved word.
          ProjectionExpression: '#raw, sk, storedAt',
          ExpressionAttributeNames: { '#raw': 'raw' },
          ScanIndexForward: !query.newestFirst,
          ConsistentRead: true,
          Limit: query.limit - items.length,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const record of page.Items ?? []) {
        const positionKey = (readString(record, 'sk') ?? '').slice(POSITIONED_PREFIX.length);
        // BETWEEN is inclusive; "strictly before" leaves the upper bound's own item out.
        if (positionKey === query.beforeKey) continue;
        items.push({ raw: readString(record, 'raw') ?? '', positionKey, ...storedAtOf(record) });
      }
      startKey = page.LastEvaluatedKey;
      if (query.sinceMs !== undefined) break;
    } while (startKey !== undefined && items.length < query.limit);
    return { items, more: startKey !== undefined };
  }

  private async seqLess(tenant: string, session: string, query: RangeQuery): Promise<PositionedItem[]> {
    const clauses = [
      ...(query.afterKey === undefined ? [] : ['pos > :after']),
      ...(query.beforeKey === undefined ? [] : ['pos < :before']),
      ...(query.sinceMs === undefined ? [] : ['storedAt >= :since']),
    ];
    const values: Item = {
      ...(query.afterKey === undefined ? {} : { ':after': str(query.afterKey) }),
      ...(query.beforeKey === undefined ? {} : { ':before': str(query.beforeKey) }),
      ...(query.sinceMs === undefined ? {} : { ':since': num(query.sinceMs) }),
    };
    return querySeqLess(this.client, this.tableName, eventKeys.sessionPartition(tenant, session), clauses.length === 0 ? undefined : { expression: clauses.join(' AND '), values });
  }
}

/**
 * Every seq-less item (`E#...`) of a session partition that passes `filter`, with its place
 * (`pos`) as its position key: all pages, strongly consistent. Replay and history both read
 * seq-less items this way; they differ only in the filter.
 */
export async function querySeqLess(client: DynamoDBClient, tableName: string, partition: string, filter?: { expression: string; values: Item }): Promise<PositionedItem[]> {
  const items: PositionedItem[] = [];
  let startKey: Item | undefined;
  do {
    const page: QueryCommandOutput = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(filter === undefined ? {} : { FilterExpression: filter.expression }),
        ExpressionAttributeValues: { ':pk': str(partition), ':prefix': str(UNPOSITIONED_PREFIX), ...filter?.values },
        ProjectionExpression: '#raw, pos, #verified, sentBy',
        ExpressionAttributeNames: { '#raw': 'raw', '#verified': SENDER_VERIFIED },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const record of page.Items ?? []) {
      const senderVerified = readSenderVerified(record);
      const sentBy = readPerson(record, 'sentBy');
      items.push({ raw: readString(record, 'raw') ?? '', positionKey: readString(record, 'pos') ?? '', ...(senderVerified === undefined ? {} : { senderVerified }), ...(sentBy === undefined ? {} : { sentBy }) });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}
