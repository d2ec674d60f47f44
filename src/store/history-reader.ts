/**
 * Paged reads of one session's stored history on the event log's layout (`session-history.ts`):
 * sequenced events under `P#{position}` in the session's partition, read as a key range in
 * `(epoch, seq)` order (or its reverse); seq-less events (commands, `attention.routed`) under
 * `E#{source}#{id}` with their place in `pos`, merged into the page whose key span holds them.
 * Strongly consistent. This file is the only history read that knows the key layout;
 * `EventLog.historyPage` delegates here. Expired events stay in the table until TTL deletes
 * them (and DynamoDB Local never does), so every read filters `expiresAt > now`.
 *
 * A page reads at most `limit` sequenced items (DynamoDB's `Limit` counts items evaluated
 * before the filters, so a page costs what it reads) plus the session's seq-less items (few;
 * each page reads them all and keeps those in its span), and answers at most `maxBytes` of
 * stored text. The cursor is the position key of the last item the page covered: the next
 * page starts strictly after it in the page order.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { HistoryBudget, HistoryPage, HistoryRange } from '../relay/domain/history.ts';
import type { HistoryItem, SenderVerified } from '../relay/domain/stored-event.ts';
import type { Person } from '../auth/oidc/person.ts';
import { num, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys, POSITIONED_END, POSITIONED_PREFIX } from './keys.ts';
import { afterPositionKey, positionKey } from './position-key.ts';
import { querySeqLess } from './session-history.ts';

export interface HistoryReadContext {
  client: DynamoDBClient;
  tableName: string;
  nowMs: number;
}

interface KeyedText {
  raw: string;
  key: string;
  senderVerified?: SenderVerified;
  sentBy?: Person;
}

/** Open key interval of one page: position keys strictly between `low` and `high` (absent: unbounded). */
interface Span {
  low?: string;
  high?: string;
}

export async function readHistoryPage(context: HistoryReadContext, tenant: string, session: string, range: HistoryRange, budget: HistoryBudget, cursor?: string): Promise<HistoryPage> {
  const partition = eventKeys.sessionPartition(tenant, session);
  const ascending = range.order === 'asc';
  const after = range.after === undefined ? undefined : afterPositionKey(range.after.epoch, range.after.seq);
  const before = range.before === undefined ? undefined : positionKey(range.before.epoch, range.before.seq);
  // The cursor moves the bound on the side the page walks from.
  const span: Span = ascending ? { ...bound('low', cursor ?? after), ...bound('high', before) } : { ...bound('low', after), ...bound('high', cursor ?? before) };
  const positioned = await readPositioned(context, partition, span, range, budget.limit);
  // The page covers keys up to the last sequenced key it read (its end in walking order);
  // seq-less items beyond it belong to the next page. When the range is read to its end, all do.
  const covered: Span = positioned.end === undefined ? span : ascending ? { ...span, high: positioned.end } : { ...span, low: positioned.end };
  // A seq-less key `{k}~{ulid}` sorts right after the sequenced key `k`, so the open span puts
  // those anchored at the page's end in the next page walking up, and in this one walking down
  // (where they come before `k`).
  const seqLess = await readSeqLess(context, partition, covered, range);
  const merged = [...positioned.items, ...seqLess].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (!ascending) merged.reverse();
  const items: HistoryItem[] = [];
  let bytes = 0;
  for (const item of merged) {
    const size = Buffer.byteLength(item.raw, 'utf8');
    // Cut before an item that would pass the byte budget; the next page starts with it.
    if (items.length > 0 && bytes + size > budget.maxBytes) return { items, cursor: (merged[items.length - 1] as KeyedText).key };
    items.push({ raw: item.raw, ...(item.senderVerified === undefined ? {} : { senderVerified: item.senderVerified }), ...(item.sentBy === undefined ? {} : { sentBy: item.sentBy }) });
    bytes += size;
  }
  return positioned.end === undefined ? { items } : { items, cursor: positioned.end };
}

function bound(side: 'low' | 'high', key: string | undefined): Span {
  return key === undefined ? {} : { [side]: key };
}

/** Sequenced items strictly inside the span, in walking order; `end` is the last key read when more lie beyond it. */
async function readPositioned(context: HistoryReadContext, partition: string, span: Span, range: HistoryRange, limit: number): Promise<{ items: KeyedText[]; end?: string }> {
  // An empty span (a page that ended on the upper bound) reads nothing.
  if (span.low !== undefined && span.high !== undefined && span.low >= span.high) return { items: [] };
  const filter = visibilityFilter(range, context.nowMs);
  const items: KeyedText[] = [];
  let startKey: Item | undefined;
  let read = 0;
  let lastKey: string | undefined;
  // BETWEEN includes `P#{high}`; when that is an event's own key (a cursor: `{position}#{emitter}`)
  // walking down it is the first item evaluated, so the first query reads one more, which does
  // not count against the page (else a page of one would never move). A bare position key
  // (`before`) is no item's.
  let boundAllowance = range.order === 'desc' && span.high !== undefined && span.high.includes('#') ? 1 : 0;
  for (;;) {
    const page: QueryCommandOutput = await context.client.send(
      new QueryCommand({
        TableName: context.tableName,
        // "Strictly above `low`": the smallest key above `P#{low}` is that key followed by U+0000.
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
        FilterExpression: filter.expression,
        ExpressionAttributeValues: {
          ':pk': str(partition),
          ':low': str(span.low === undefined ? POSITIONED_PREFIX : `${POSITIONED_PREFIX}${span.low}\u0000`),
          ':high': str(span.high === undefined ? POSITIONED_END : `${POSITIONED_PREFIX}${span.high}`),
          ...filter.values,
        },
        // `raw` is a DynamoDB reserved word.
        ProjectionExpression: '#raw, sk',
        ExpressionAttributeNames: { '#raw': 'raw' },
        ScanIndexForward: range.order === 'asc',
        ConsistentRead: true,
        Limit: limit - read + boundAllowance,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const record of page.Items ?? []) {
      const key = (readString(record, 'sk') ?? '').slice(POSITIONED_PREFIX.length);
      if (key !== span.high) items.push({ raw: readString(record, 'raw') ?? '', key });
    }
    read += (page.ScannedCount ?? 0) - boundAllowance;
    boundAllowance = 0;
    startKey = page.LastEvaluatedKey;
    lastKey = startKey === undefined ? undefined : (readString(startKey, 'sk') ?? '').slice(POSITIONED_PREFIX.length);
    if (startKey === undefined || read >= limit) break;
  }
  // Walking up, a page that stopped on the upper bound itself has read the whole span.
  return lastKey === undefined || lastKey === span.high ? { items } : { items, end: lastKey };
}

/** Seq-less items whose place lies strictly inside the span. */
async function readSeqLess(context: HistoryReadContext, partition: string, span: Span, range: HistoryRange): Promise<KeyedText[]> {
  const filter = visibilityFilter(range, context.nowMs);
  const conditions = [filter.expression, ...(span.low === undefined ? [] : ['pos > :low']), ...(span.high === undefined ? [] : ['pos < :high'])];
  const values: Item = {
    ...filter.values,
    ...(span.low === undefined ? {} : { ':low': str(span.low) }),
    ...(span.high === undefined ? {} : { ':high': str(span.high) }),
  };
  const items = await querySeqLess(context.client, context.tableName, partition, { expression: conditions.join(' AND '), values });
  return items.map((item) => ({ raw: item.raw, key: item.positionKey, ...(item.senderVerified === undefined ? {} : { senderVerified: item.senderVerified }), ...(item.sentBy === undefined ? {} : { sentBy: item.sentBy }) }));
}

/** Unexpired, and inside the admission window when one is asked for. */
function visibilityFilter(range: HistoryRange, nowMs: number): { expression: string; values: Item } {
  const clauses = ['expiresAt > :now'];
  const values: Item = { ':now': num(Math.floor(nowMs / 1000)) };
  if (range.sinceMs !== undefined) {
    clauses.push('storedAt >= :since');
    values[':since'] = num(range.sinceMs);
  }
  if (range.untilMs !== undefined) {
    clauses.push('storedAt < :until');
    values[':until'] = num(range.untilMs);
  }
  return { expression: clauses.join(' AND '), values };
}
