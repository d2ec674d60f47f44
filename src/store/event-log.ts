/**
 * The tenant-scoped, durable event log on DynamoDB: admission with dedupe, and the replay
 * reads the bindings serve. One event is one item and one write (one write unit up to 1 KB):
 * there is no index to keep, the session's partition is its history (`session-history.ts`).
 *
 * Item kinds (attribute `kind`), all in the events table:
 * - `event`: one stored event, keyed by what identifies it in order:
 *   - sequenced (session, `seq`): `P#{epoch}.{seq}#{source digest}` in its session's partition
 *     (sessions are emitter-scoped, AEP-0001 §5.2: two emitters may each hold a position of
 *     one session name; a replay of the name serves both, `position-key.ts`). A put that finds
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
 *   session, is a different item, stored again (docs/protocol-and-guarantees.md, "Dedupe and positions").
 *   A command sent by a verified connection also carries `senderVerified` (`{ operator }`), the
 *   relay's finding beside the text, which history shows and nothing else reads.
 * - `redelivery`: a short-lived marker written when a duplicate arrives (`redelivery-markers.ts`).
 * - `order` and `late`: each emitter's order state and late entries (`session-order-store.ts`).
 * - `session`: the tenant's registry of sessions held, for replay-all (`session-registry.ts`).
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { isBeforeFirst } from '../protocol/positions.ts';
import type { Position } from '../protocol/positions.ts';
import { isAgentScopedType } from '../protocol/type-grammar.ts';
import type { HistoryBudget, HistoryPage, HistoryRange } from '../relay/domain/history.ts';
import type { AdmittedEvent, AppendOutcome, Page, SeqLessAnchor, StoredAnnotations, WindowItem } from '../relay/domain/stored-event.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { EventLogPort } from '../relay/ports/event-log.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { isConditionFailure, num, readString, str } from './attribute-values.ts';
import { senderVerifiedValue } from './sender-verified.ts';
import { personValue } from './person-attribute.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys, sourceDigest } from './keys.ts';
import { readHistoryPage } from './history-reader.ts';
import { clampLimit } from './pages.ts';
import { afterPositionKey, emitterKey, positionOfKey, seqLessKey } from './position-key.ts';
import { RedeliveryMarkers } from './redelivery-markers.ts';
import { SessionRegistry } from './session-registry.ts';
import { expiresAfter } from './table-access.ts';
import { SessionHistory } from './session-history.ts';
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

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: EventLogOptions,
  ) {
    this.sessions = new SessionRegistry(client, { tableName: options.tableName, refreshMs: options.registryRefreshMs ?? 60_000 });
    this.redeliveries = new RedeliveryMarkers(client, { tableName: options.tableName, lifetimeSeconds: options.liveOnlySeconds, mintId: options.mintId });
    this.history = new SessionHistory(client, options.tableName);
  }

  /**
   * Stores an event once: a retransmit writes nothing to the log but leaves a redelivery marker,
   * so fan-out still forwards it (AEP-0003 §5); a different event at a taken position is refused.
   */
  async append(tenant: string, admitted: AdmittedEvent, seqLessAnchor?: SeqLessAnchor, annotations: StoredAnnotations = {}): Promise<AppendOutcome> {
    const { event } = admitted;
    const nowMs = this.options.now();
    const agentScoped = isAgentScopedType(event.type) || event.session === undefined;
    const retentionDays = agentScoped ? 0 : ((await this.options.retentionDaysOf?.(tenant)) ?? this.options.retentionDays);
    const item: Item = {
      kind: str('event'),
      raw: str(admitted.raw),
      storedAt: num(nowMs),
      expiresAt: num(expiresAfter(nowMs, agentScoped ? this.options.liveOnlySeconds : retentionDays * SECONDS_PER_DAY)),
      // Written by the same conditional put as the text, so a retransmit neither adds nor changes it.
      ...(annotations.senderVerified === undefined ? {} : { senderVerified: senderVerifiedValue(annotations.senderVerified) }),
      ...(annotations.sentBy === undefined ? {} : { sentBy: personValue(annotations.sentBy) }),
      ...(annotations.via === undefined ? {} : { via: str(annotations.via) }),
    };
    // The registry write (replay-all's list) runs beside the put rather than before it: awaiting
    // it first held a session's first pipelined events back behind it, storing them late. It is
    // written once a minute per process at most (`session-registry.ts`).
    let registering: Promise<void> | undefined;
    if (agentScoped) {
      item.pk = str(eventKeys.agentPartition(tenant, event.agent));
      item.sk = str(eventKeys.eventSort(event.source, event.id));
    } else {
      const session = event.session as string;
      item.pk = str(eventKeys.sessionPartition(tenant, session));
      const place = event.seq === undefined ? (seqLessAnchor ?? (await this.anchorSeqLess(tenant, session))).positionKey : emitterKey(event.epoch ?? 0, event.seq, sourceDigest(event.source));
      item.sk = str(event.seq === undefined ? eventKeys.eventSort(event.source, event.id) : eventKeys.positionSort(place));
      item.pos = str(place);
      registering = this.sessions.register(tenant, session, nowMs, expiresAfter(nowMs, retentionDays * SECONDS_PER_DAY));
      // Handled at once and awaited below: a rejection while the put is still in flight would
      // otherwise be unhandled for that while, which crashes a Lambda invocation.
      registering.catch(() => undefined);
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
      await this.redeliveries.write(tenant, storedRaw, nowMs, readString(item, 'via'));
      return 'duplicate';
    }
  }

  /**
   * The newest `limit` events of a session strictly after `after` (all emitters; seq-less ones
   * in their place), oldest first: the read a replay filters (`subscribe/session-replay.ts`).
   */
  async readWindow(tenant: string, session: string, after: Position | undefined, limit: number): Promise<WindowItem[]> {
    const { afterKey } = afterKeyOf(after);
    const { items } = await this.history.read(tenant, session, { ...(afterKey === undefined ? {} : { afterKey }), newestFirst: true, limit });
    return items
      .slice(0, limit)
      .reverse()
      .map((item) => ({ raw: item.raw, anchor: anchorOf(session, item.positionKey) }));
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

function afterKeyOf(after: Position | undefined): { afterKey?: string } {
  // Before the first position is the start of the session, seq-less events anchored there included.
  return after === undefined || isBeforeFirst(after) ? {} : { afterKey: afterPositionKey(after.epoch, after.seq) };
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

/** The position an item stands at (a seq-less one: where it arrived), null before every position. */
function anchorOf(session: string, key: string): { epoch: number; seq: number } | null {
  if (key.startsWith('-')) return null;
  const { epoch, seq } = positionOfKey(session, key);
  return { epoch, seq };
}
