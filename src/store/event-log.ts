/**
 * The tenant-scoped, durable event log on DynamoDB: admission with dedupe, and the replay
 * reads the bindings serve. One event is one item and one write (one write unit up to 1 KB):
 * there is no index to keep, the session's partition is its history (`session-history.ts`).
 *
 * Item kinds (attribute `kind`), all in the events table:
 * - `event`: one stored event, keyed by what identifies it in order:
 *   - sequenced (session, `seq`): `P#{epoch}.{seq}` in its session's partition. A put that finds
 *     the position taken learns what holds it from the failed condition itself
 *     (`ReturnValuesOnConditionCheckFailure`, no read): the same `(source, id)` is a retransmit
 *     (stored once, forwarded as a redelivery); another event is a position conflict
 *     (AEP-0001 §7.2: an emitter fault), refused and never overwriting the stored one.
 *   - seq-less session events (commands, `attention.routed`, AEP-0001 §5.2): `E#{source}#{id}`
 *     in the session's partition, their place in history in `pos` (`position-key.ts`).
 *   - agent-scoped events (no session, no position): `E#{source}#{id}` in their agent's
 *     partition; fanned out live, never replayed.
 *   Dedupe is therefore per partition: a sequenced event's `(source, id)` at one position of its
 *   session; a seq-less one per `(tenant, session, source, id)`; an agent-scoped one per
 *   `(tenant, agent, source, id)`. An `id` reused at a different position, or in another
 *   session, is a different item, stored again (README, "Guarantees").
 * - `redelivery`: a short-lived marker written when a duplicate arrives (`redelivery-markers.ts`).
 * - `late-ledger`: which events were stored after a higher position of their session, written
 *   by fan-out so that resume misses none of them (`late-ledger.ts`).
 * - `session`: the tenant's registry of sessions held, for replay-all (`session-registry.ts`).
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { isBeforeFirst } from '../protocol/positions.ts';
import type { Position } from '../protocol/positions.ts';
import type { LateArrival } from '../relay/domain/deliverable.ts';
import { isAgentScopedType } from '../protocol/type-grammar.ts';
import type { HistoryBudget, HistoryPage, HistoryRange } from '../relay/domain/history.ts';
import type { AdmittedEvent, AppendOutcome, Page, ReplayResult, SeqLessAnchor, StoredEvent } from '../relay/domain/stored-event.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { EventLogPort } from '../relay/ports/event-log.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { readHistoryPage } from './history-reader.ts';
import { clampLimit } from './pages.ts';
import { LateLedger } from './late-ledger.ts';
import { positionKey, positionOfKey, seqLessKey } from './position-key.ts';
import { RedeliveryMarkers } from './redelivery-markers.ts';
import { SessionRegistry } from './session-registry.ts';
import { expiresAfter } from './table-access.ts';
import { SessionHistory } from './session-history.ts';
import { readSessionTop } from './session-top.ts';
import type { PositionedItem } from './session-history.ts';

export type { PositionedItem } from './session-history.ts';

export interface EventLogOptions {
  tableName: string;
  /** Replay serves at most the newest `replayBuffer` events of a session (advertised as `replay.buffer`). */
  replayBuffer: number;
  /** Stored events expire this many days after admission (DynamoDB TTL): the deployment's default. */
  retentionDays: number;
  /** The tenant's own retention (its `retentionDays` quota), applied to new events; the default when absent. */
  retentionDaysOf?: (tenant: string) => Promise<number | undefined>;
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
  private readonly history: SessionHistory;
  private readonly ledger: LateLedger;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: EventLogOptions,
  ) {
    this.sessions = new SessionRegistry(client, { tableName: options.tableName, refreshMs: options.registryRefreshMs ?? 60_000 });
    this.redeliveries = new RedeliveryMarkers(client, { tableName: options.tableName, lifetimeSeconds: options.liveOnlySeconds, mintId: options.mintId });
    this.history = new SessionHistory(client, options.tableName);
    this.ledger = new LateLedger(client, { tableName: options.tableName, mintId: options.mintId });
  }

  /**
   * Stores an event once: a retransmit writes nothing to the log but leaves a redelivery marker,
   * so fan-out still forwards it (AEP-0003 §5); a different event at a taken position is refused.
   */
  async append(tenant: string, admitted: AdmittedEvent, seqLessAnchor?: SeqLessAnchor): Promise<AppendOutcome> {
    const { event } = admitted;
    const nowMs = this.options.now();
    const agentScoped = isAgentScopedType(event.type) || event.session === undefined;
    const retentionDays = agentScoped ? 0 : ((await this.options.retentionDaysOf?.(tenant)) ?? this.options.retentionDays);
    const item: Item = {
      kind: str('event'),
      raw: str(admitted.raw),
      storedAt: num(nowMs),
      expiresAt: num(expiresAfter(nowMs, agentScoped ? this.options.liveOnlySeconds : retentionDays * SECONDS_PER_DAY)),
    };
    // The registry write (replay-all's list) runs beside the put rather than before it: awaiting
    // it first held a session's first pipelined events back behind it, storing them late.
    let registering: Promise<void> | undefined;
    if (agentScoped) {
      item.pk = str(eventKeys.agentPartition(tenant, event.agent));
      item.sk = str(eventKeys.eventSort(event.source, event.id));
    } else {
      const session = event.session as string;
      item.pk = str(eventKeys.sessionPartition(tenant, session));
      const place = event.seq === undefined ? (seqLessAnchor ?? (await this.anchorSeqLess(tenant, session))).positionKey : positionKey(event.epoch ?? 0, event.seq);
      item.sk = str(event.seq === undefined ? eventKeys.eventSort(event.source, event.id) : eventKeys.positionSort(place));
      item.pos = str(place);
      registering = this.sessions.register(tenant, session, nowMs, expiresAfter(nowMs, retentionDays * SECONDS_PER_DAY));
    }
    try {
      return await this.put(tenant, admitted, item, agentScoped, nowMs);
    } finally {
      // A failed registry write fails the append (the emitter resends: a retransmit registers again).
      await registering;
    }
  }

  private async put(tenant: string, admitted: AdmittedEvent, item: Item, agentScoped: boolean, nowMs: number): Promise<AppendOutcome> {
    const { event } = admitted;
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
      const storedRaw = readString(error.Item, 'raw') ?? admitted.raw;
      // A position key collides with any event there; a dedupe key only with the same (source, id).
      if (event.seq !== undefined && !agentScoped && !sameEvent(storedRaw, event.source, event.id)) return 'conflict';
      // Forward the stored copy: a true redelivery is byte-identical, and an id collision
      // (a different event reusing `(source, id)`, AEP-0001 §7.4) must not smuggle new content.
      await this.redeliveries.write(tenant, storedRaw, nowMs);
      return 'duplicate';
    }
  }

  /**
   * Replay of one session (AEP-0003 §5): the events after `requested` (or the whole served
   * window when absent), limited to the newest `replayBuffer` events. When more than that lie
   * after the requested position, the result says where the served window starts.
   *
   * Only events at or below the session's top are served: the top is read first, and whatever
   * lies above it, fan-out handles after this read and delivers live (`session-top.ts`,
   * `fanout/late-arrivals.ts`). Serving such an event here could hand a consumer a position
   * above an event stored before it whose late arrival is not on record yet.
   */
  async replay(tenant: string, session: string, requested?: Position): Promise<ReplayResult & { items: PositionedItem[] }> {
    const window = this.options.replayBuffer;
    const { afterKey } = afterKeyOf(requested);
    const { top } = await readSessionTop(this.client, this.options.tableName, tenant, session);
    // The newest window + 1 sequenced events and every seq-less one after `requested`, merged;
    // one more than the window tells whether it overflows. Plus the events below `requested`
    // stored after it (`late-ledger.ts`): a consumer holding `requested` may lack those.
    const [read, late] = await Promise.all([
      this.history.read(tenant, session, { ...(afterKey === undefined ? {} : { afterKey }), newestFirst: true, limit: window + 1 }),
      afterKey === undefined || top === null ? [] : this.ledger.storedLateBelow(tenant, session, afterKey, Math.floor(this.options.now() / 1000)),
    ]);
    let newestFirst = read.items.filter((item) => top !== null && item.positionKey <= top);
    // Newest first: the first item read is the highest, and it is above the top if any is.
    const pendingThrough = newestFirst.length < read.items.length ? read.items[0]?.positionKey : undefined;
    const pending = pendingThrough === undefined ? {} : { pendingThrough };
    if (pendingThrough !== undefined && read.items.length > window && top !== null && (afterKey === undefined || top > afterKey)) {
      // The read filled its window partly above the top: the window below the top, read again.
      newestFirst = (await this.history.read(tenant, session, { ...(afterKey === undefined ? {} : { afterKey }), beforeKey: justAbove(top), newestFirst: true, limit: window + 1 })).items;
    }
    // In position order, the late ones (all below `requested`) first: a consumer that drops
    // mid-replay and resumes after the last position it got must already hold everything below
    // that position stored before it, or its next resume could not know to send it.
    const after = newestFirst.slice(0, window).reverse();
    const afterKeys = new Set(after.map((item) => item.positionKey));
    const items = [...late.filter((item) => !afterKeys.has(item.positionKey)).slice(-window), ...after];
    const earliest = after[0];
    if (newestFirst.length > window && requested !== undefined && earliest !== undefined) {
      return { exhaustedEarliest: positionOfKey(session, earliest.positionKey), items, ...pending };
    }
    return { items, ...pending };
  }

  async finishedWith(tenant: string, session: string): Promise<(position: Position) => boolean> {
    const top = await this.sessionTop(tenant, session);
    return (position) => top !== null && positionKey(position.epoch, position.seq) <= top;
  }

  /** The session's top: the highest order key fan-out has finished with (null: none yet). */
  async sessionTop(tenant: string, session: string): Promise<string | null> {
    return (await readSessionTop(this.client, this.options.tableName, tenant, session)).top;
  }

  /** Events of a session strictly after a position, oldest first, one bounded page at a time. */
  async readAfter(tenant: string, session: string, after: Position | undefined, limit: number, cursor?: string): Promise<Page<PositionedItem>> {
    const size = clampLimit(limit);
    const fromCursor = cursor === undefined ? undefined : Buffer.from(cursor, 'base64url').toString('utf8');
    const fromAfter = afterKeyOf(after).afterKey;
    const afterKey = fromCursor !== undefined && (fromAfter === undefined || fromCursor > fromAfter) ? fromCursor : fromAfter;
    const { items, more } = await this.history.read(tenant, session, { ...(afterKey === undefined ? {} : { afterKey }), newestFirst: false, limit: size });
    const page = items.slice(0, size);
    const last = page.at(-1);
    return (more || items.length > size) && last !== undefined ? { items: page, cursor: Buffer.from(last.positionKey, 'utf8').toString('base64url') } : { items: page };
  }

  /** One page of a session's history (`history-reader.ts` holds the layout-specific queries). */
  historyPage(tenant: string, session: string, range: HistoryRange, budget: HistoryBudget, cursor?: string): Promise<HistoryPage> {
    return readHistoryPage({ client: this.client, tableName: this.options.tableName, nowMs: this.options.now() }, tenant, session, range, budget, cursor);
  }

  /**
   * The session's events stored at or after `sinceMs`, oldest first, among its newest `limit`.
   * A stream opening catches up with these, so an event ingested while it was being set up
   * (before its subscription was recorded) is not missed.
   */
  async storedSince(tenant: string, session: string, sinceMs: number, limit = 100): Promise<PositionedItem[]> {
    // Bounded by the session's top, as replay is, for the same reason.
    const { top } = await readSessionTop(this.client, this.options.tableName, tenant, session);
    if (top === null) return [];
    const { items } = await this.history.read(tenant, session, { newestFirst: true, limit, sinceMs, beforeKey: justAbove(top) });
    return items.slice(0, limit).reverse();
  }

  /** The earliest position replay serves for a session, or undefined when it holds none. */
  async earliestServedPosition(tenant: string, session: string): Promise<Position | undefined> {
    const { items } = await this.replay(tenant, session);
    const earliest = items[0];
    return earliest === undefined ? undefined : positionOfKey(session, earliest.positionKey);
  }

  /**
   * Records a batch's late arrivals of one session (fan-out writes it from the stream, which is
   * store order); the ledger expires with the tenant's retention.
   */
  async recordLateArrivals(tenant: string, session: string, arrivals: readonly LateArrival[]): Promise<void> {
    const nowMs = this.options.now();
    const retentionDays = (await this.options.retentionDaysOf?.(tenant)) ?? this.options.retentionDays;
    await this.ledger.record(tenant, session, arrivals, expiresAfter(nowMs, retentionDays * SECONDS_PER_DAY));
  }

  /** The session's sequenced events strictly between two positions, at most `limit` from the low end (or the high end). */
  async storedBetween(tenant: string, session: string, after: Position | undefined, before: Position, limit: number, newestFirst = false): Promise<StoredEvent[]> {
    const afterKey = after === undefined || isBeforeFirst(after) ? undefined : positionKey(after.epoch, after.seq);
    const items = await this.history.positionedBetween(tenant, session, afterKey, positionKey(before.epoch, before.seq), limit, newestFirst);
    return items.map((item) => ({ raw: item.raw, order: { key: item.positionKey, itemKey: eventKeys.positionSort(item.positionKey) }, ...(item.storedAtMs === undefined ? {} : { storedAtMs: item.storedAtMs }) }));
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

  private newestPositionKey(tenant: string, session: string): Promise<string | undefined> {
    return this.history.newestPositionKey(tenant, session);
  }
}

/** A key just above `key` (an exclusive bound that keeps `key` itself in). */
function justAbove(key: string): string {
  return `${key}\u0000`;
}

function afterKeyOf(after: Position | undefined): { afterKey?: string } {
  // Before the first position is the start of the session, seq-less events anchored there included.
  return after === undefined || isBeforeFirst(after) ? {} : { afterKey: positionKey(after.epoch, after.seq) };
}

/** Whether stored text is the event with this `(source, id)` (a retransmit), not another one. */
function sameEvent(storedRaw: string, source: string, id: string): boolean {
  try {
    const stored = JSON.parse(storedRaw) as { source?: unknown; id?: unknown };
    return stored.source === source && stored.id === id;
  } catch {
    return false;
  }
}
