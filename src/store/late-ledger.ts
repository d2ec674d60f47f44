/**
 * The late ledger: which events of a session were stored after a higher position of it, so a
 * resume "strictly after P" (AEP-0003 §7) still returns the ones below P that a consumer holding
 * P may never have seen.
 *
 * Why it exists: API Gateway runs a connection's frames concurrently, so an emitter's pipelined
 * seq 3 and 4 can be stored as 4, 3. A consumer that got 4 (live, or in a replay read before 3
 * was stored) and dropped resumes after 4; key order alone would never give it 3.
 *
 * Who writes it: fan-out, from the table's stream, which is the session's store order (one
 * partition key, one shard lineage). For each batch it writes one item per session holding late
 * events, before it reads any subscription: so a consumer that resumes either finds the entry in
 * its replay, or is already subscribed when fan-out delivers the event live. Nothing is written
 * on the ingest path (one write per event stays one write) and nothing for in-order sessions.
 *
 * Layout: in the session's partition, `L#{above}#{id}` where `above` is the highest order key
 * among the item's entries' `above`; each entry names a late event's order key, its item's sort
 * key, the highest order key stored before it, and its store rank. A resume after P reads
 * `L#{P}` onwards, keeps the entries below P whose `above` is at or above P (`storedLateBelow`),
 * and fetches those events with one strongly consistent batch read.
 */
import { BatchGetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { LateArrival } from '../relay/domain/deliverable.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import type { PositionedItem } from './session-history.ts';

const LEDGER_PREFIX = 'L#';
/** The first string above every `L#…` key. */
const LEDGER_END = 'L$';
/** BatchGetItem takes at most 100 keys per call. */
const BATCH_GET_LIMIT = 100;

export interface LateLedgerOptions {
  tableName: string;
  mintId: IdMinter;
}

interface LedgerEntry {
  /** The late event's order key (its position key, or a seq-less event's place). */
  k: string;
  /** The late event's sort key in the session partition. */
  i: string;
  /** The highest order key stored before it. */
  a: string;
  /** Its store rank (`LateArrival.storeRank`): the order the stream gave, kept for diagnosis; resume does not rely on it. */
  r: string;
}

export class LateLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: LateLedgerOptions,
  ) {}

  /** Records one batch's late events of one session; they expire with the events they name. */
  async record(tenant: string, session: string, arrivals: readonly LateArrival[], expiresAtSec: number): Promise<void> {
    if (arrivals.length === 0) return;
    const entries: LedgerEntry[] = arrivals.map((arrival) => ({ k: arrival.orderKey, i: arrival.itemKey, a: arrival.above, r: arrival.storeRank }));
    const highestAbove = entries.reduce((top, entry) => (entry.a > top ? entry.a : top), entries[0]!.a);
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(eventKeys.sessionPartition(tenant, session)),
          sk: str(`${LEDGER_PREFIX}${highestAbove}#${this.options.mintId()}`),
          kind: str('late-ledger'),
          entries: str(JSON.stringify(entries)),
          expiresAt: num(expiresAtSec),
        },
      }),
    );
  }

  /**
   * The stored events below `afterKey` that were stored after it: what a consumer holding
   * `afterKey` may lack below it. Oldest key first; expired ones left out.
   *
   * Those whose `above` (the top when they were stored) is at or above `afterKey`: when
   * `afterKey` was not late, exactly the late arrivals below it stored after it. When it was late
   * itself, also some stored before it, on purpose: a late position can reach a consumer before
   * fan-out recorded what was stored before it (a replay serves what is at or below the top, a
   * gap fill what is missing), so its store rank does not prove the consumer has those (they
   * come again: duplicates, never a miss). Every entry that qualifies sits in an item whose key
   * is `L#{above}` with `above` at or above `afterKey`: one range read.
   */
  async storedLateBelow(tenant: string, session: string, afterKey: string, nowSec: number): Promise<PositionedItem[]> {
    const partition = eventKeys.sessionPartition(tenant, session);
    const itemKeys = new Map<string, string>();
    let startKey: Item | undefined;
    do {
      const page: QueryCommandOutput = await this.client.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: { ':pk': str(partition), ':low': str(`${LEDGER_PREFIX}${afterKey}`), ':high': str(LEDGER_END) },
          ProjectionExpression: 'entries',
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const record of page.Items ?? []) {
        for (const entry of entriesOf(readString(record, 'entries'))) {
          if (entry.k < afterKey && entry.a >= afterKey) itemKeys.set(entry.i, entry.k);
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    const items = await this.fetch(partition, [...itemKeys.keys()], nowSec);
    return items.map(({ raw, sk }) => ({ raw, positionKey: itemKeys.get(sk) ?? '' })).sort((a, b) => (a.positionKey < b.positionKey ? -1 : a.positionKey > b.positionKey ? 1 : 0));
  }

  private async fetch(partition: string, sortKeys: readonly string[], nowSec: number): Promise<Array<{ raw: string; sk: string }>> {
    const found: Array<{ raw: string; sk: string }> = [];
    for (let start = 0; start < sortKeys.length; start += BATCH_GET_LIMIT) {
      let keys: Item[] | undefined = sortKeys.slice(start, start + BATCH_GET_LIMIT).map((sk) => ({ pk: str(partition), sk: str(sk) }));
      while (keys !== undefined && keys.length > 0) {
        const result = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.options.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: '#raw, sk, expiresAt', ExpressionAttributeNames: { '#raw': 'raw' } } },
          }),
        );
        for (const record of result.Responses?.[this.options.tableName] ?? []) {
          const raw = readString(record, 'raw');
          const sk = readString(record, 'sk');
          const expiresAt = readNumber(record, 'expiresAt');
          if (raw !== undefined && sk !== undefined && (expiresAt === undefined || expiresAt > nowSec)) found.push({ raw, sk });
        }
        keys = result.UnprocessedKeys?.[this.options.tableName]?.Keys as Item[] | undefined;
      }
    }
    return found;
  }
}

function entriesOf(text: string | undefined): LedgerEntry[] {
  if (text === undefined) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.filter((entry): entry is LedgerEntry => typeof entry?.k === 'string' && typeof entry?.i === 'string' && typeof entry?.a === 'string' && typeof entry?.r === 'string');
  } catch {
    return [];
  }
}
