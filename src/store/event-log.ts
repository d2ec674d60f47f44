/**
 * The tenant-scoped, durable event log on DynamoDB: admission with `(source, id)` dedupe,
 * and the replay reads the bindings serve.
 *
 * Item kinds (attribute `kind`), all in the events table:
 * - `event`: one stored event. Session-scoped events live in their session's partition and
 *   carry a `pos` for the `byPosition` index; agent-scoped events (AEP-0001 §5.2: no
 *   session, no position) live in their agent's partition without `pos`, so the index stays
 *   sparse and they are fanned out live but never replayed.
 * - `redelivery`: a short-lived marker written when a duplicate arrives (`redelivery-markers.ts`).
 * - `session`: the tenant's registry of sessions held, for replay-all (`session-registry.ts`).
 */
import { PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Position } from '../protocol/positions.ts';
import { isAgentScopedType } from '../protocol/type-grammar.ts';
import type { AdmittedEvent, AppendOutcome, HistoryItem, Page, ReplayResult, SeqLessAnchor } from '../relay/domain/stored-event.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { EventLogPort } from '../relay/ports/event-log.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { clampLimit, decodeCursor, pageOf } from './pages.ts';
import { positionKey, positionOfKey, seqLessKey } from './position-key.ts';
import { RedeliveryMarkers } from './redelivery-markers.ts';
import { SessionRegistry } from './session-registry.ts';
import { expiresAfter } from './table-access.ts';
import { POSITION_INDEX } from './table-definitions.ts';

/** One item read back from a session's history, with the index key it sorts under (`position-key.ts`). */
export interface PositionedItem extends HistoryItem {
  positionKey: string;
}

export interface EventLogOptions {
  tableName: string;
  /** Replay serves at most the newest `replayBuffer` events of a session (advertised as `replay.buffer`). */
  replayBuffer: number;
  /** Stored events expire this many days after admission (DynamoDB TTL). */
  retentionDays: number;
  /** Lifetime of live-only items (agent-scoped events, redelivery markers), in seconds. */
  liveOnlySeconds: number;
  now: Clock;
  mintId: IdMinter;
  /**
   * How long this process trusts that a session is already in the registry before
   * refreshing it (saves one write per event on a warm container).
   */
  registryRefreshMs?: number;
}

const SECONDS_PER_DAY = 86_400;

export class EventLog implements EventLogPort {
  private readonly sessions: SessionRegistry;
  private readonly redeliveries: RedeliveryMarkers;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: EventLogOptions,
  ) {
    this.sessions = new SessionRegistry(client, { tableName: options.tableName, lifetimeSeconds: options.retentionDays * SECONDS_PER_DAY, refreshMs: options.registryRefreshMs ?? 60_000 });
    this.redeliveries = new RedeliveryMarkers(client, { tableName: options.tableName, lifetimeSeconds: options.liveOnlySeconds, mintId: options.mintId });
  }

  /**
   * Stores an event once per `(tenant, source, id)`. A duplicate writes nothing to the log;
   * it leaves a redelivery marker so fan-out still forwards it (AEP-0003 §5).
   */
  async append(tenant: string, admitted: AdmittedEvent, seqLessAnchor?: SeqLessAnchor): Promise<AppendOutcome> {
    const { event } = admitted;
    const nowMs = this.options.now();
    const agentScoped = isAgentScopedType(event.type) || event.session === undefined;
    const item: Item = {
      pk: str(agentScoped ? eventKeys.agentPartition(tenant, event.agent) : eventKeys.sessionPartition(tenant, event.session as string)),
      sk: str(eventKeys.eventSort(event.source, event.id)),
      kind: str('event'),
      raw: str(admitted.raw),
      storedAt: num(nowMs),
      expiresAt: num(expiresAfter(nowMs, agentScoped ? this.options.liveOnlySeconds : this.options.retentionDays * SECONDS_PER_DAY)),
    };
    if (!agentScoped) {
      const session = event.session as string;
      await this.sessions.register(tenant, session, nowMs);
      item.pos = str(
        event.seq === undefined
          ? (seqLessAnchor ?? (await this.anchorSeqLess(tenant, session))).positionKey
          : positionKey(event.epoch ?? 0, event.seq),
      );
    }
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'stored';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Forward the stored copy: a true redelivery is byte-identical, and an id collision
      // (a different event reusing `(source, id)`, AEP-0001 §7.4) must not smuggle new content.
      await this.redeliveries.write(tenant, readString(error.Item, 'raw') ?? admitted.raw, nowMs);
      return 'duplicate';
    }
  }

  /**
   * Replay of one session (AEP-0003 §5): the events after `after` (or the whole served window
   * when absent), limited to the newest `replayBuffer` events. When more than that lie after
   * the requested position, the result says where the served window starts.
   */
  async replay(tenant: string, session: string, after?: Position): Promise<ReplayResult & { items: PositionedItem[] }> {
    const window = this.options.replayBuffer;
    const newestFirst: PositionedItem[] = [];
    let exclusiveStartKey: Item | undefined;
    let overflow = false;
    do {
      const page = await this.queryHistory(tenant, session, after, { newestFirst: true, limit: window + 1 - newestFirst.length, startKey: exclusiveStartKey });
      for (const record of page.Items ?? []) {
        if (newestFirst.length === window) {
          overflow = true;
          break;
        }
        newestFirst.push(historyItem(record));
      }
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (!overflow && exclusiveStartKey !== undefined && newestFirst.length <= window);
    const items = newestFirst.reverse();
    const earliest = items[0];
    if (overflow && after !== undefined && earliest !== undefined) {
      return { exhaustedEarliest: positionOfKey(session, earliest.positionKey), items };
    }
    return { items };
  }

  /** Events of a session strictly after a position, oldest first, one bounded page at a time. */
  async readAfter(tenant: string, session: string, after: Position | undefined, limit: number, cursor?: string): Promise<Page<PositionedItem>> {
    const page = await this.queryHistory(tenant, session, after, { newestFirst: false, limit: clampLimit(limit), startKey: decodeCursor(cursor) });
    return pageOf((page.Items ?? []).map(historyItem), page.LastEvaluatedKey);
  }

  /** One page of a session's history strictly after `after`, read from the position index. */
  private queryHistory(tenant: string, session: string, after: Position | undefined, page: { newestFirst: boolean; limit: number; startKey: Item | undefined }) {
    return this.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        IndexName: POSITION_INDEX,
        KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND pos > :after',
        ExpressionAttributeValues: {
          ':pk': str(eventKeys.sessionPartition(tenant, session)),
          ...(after === undefined ? {} : { ':after': str(positionKey(after.epoch, after.seq)) }),
        },
        // `raw` is a DynamoDB reserved word.
        ProjectionExpression: '#raw, pos',
        ExpressionAttributeNames: { '#raw': 'raw' },
        ScanIndexForward: !page.newestFirst,
        ConsistentRead: true,
        Limit: page.limit,
        ExclusiveStartKey: page.startKey,
      }),
    );
  }

  /**
   * The session's events stored at or after `sinceMs`, oldest first, among its newest `limit`.
   * A stream opening catches up with these, so an event ingested while it was being set up
   * (before its subscription was recorded) is not missed.
   */
  async storedSince(tenant: string, session: string, sinceMs: number, limit = 100): Promise<PositionedItem[]> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        IndexName: POSITION_INDEX,
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: 'storedAt >= :since',
        ExpressionAttributeValues: { ':pk': str(eventKeys.sessionPartition(tenant, session)), ':since': num(sinceMs) },
        ProjectionExpression: '#raw, pos',
        ExpressionAttributeNames: { '#raw': 'raw' },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (page.Items ?? []).map(historyItem).reverse();
  }

  /** The earliest position replay serves for a session, or undefined when it holds none. */
  async earliestServedPosition(tenant: string, session: string): Promise<Position | undefined> {
    const { items } = await this.replay(tenant, session);
    const earliest = items[0];
    return earliest === undefined ? undefined : positionOfKey(session, earliest.positionKey);
  }

  /** Sessions the tenant holds history for, one bounded page at a time. */
  listSessions(tenant: string, limit: number, cursor?: string): Promise<Page<string>> {
    return this.sessions.list(tenant, limit, cursor);
  }

  /**
   * The place a seq-less event arriving now takes in its session's history. Routing takes it
   * before delivering a command, so the command sorts before the acknowledgement it elicits.
   */
  async anchorSeqLess(tenant: string, session: string): Promise<SeqLessAnchor> {
    return { positionKey: seqLessKey(await this.newestPositionKey(tenant, session), this.options.mintId()) };
  }

  private async newestPositionKey(tenant: string, session: string): Promise<string | undefined> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        IndexName: POSITION_INDEX,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': str(eventKeys.sessionPartition(tenant, session)) },
        ProjectionExpression: 'pos',
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return readString(page.Items?.[0], 'pos');
  }
}

function historyItem(record: Item): PositionedItem {
  return { raw: readString(record, 'raw') ?? '', positionKey: readString(record, 'pos') ?? '' };
}
