/**
 * Session order on DynamoDB (`SessionOrderPort`), all in the session's partition of the events
 * table, so a session's events, its emitters' order states and its late entries share one
 * partition key (one stream shard lineage, one fan-out lane):
 * - `O#{source digest}`: one emitter's order state (`order/emitter-order.ts`) as JSON in `o`,
 *   its `version` (every write is conditional on it), and `wakeAt` while events are held. The
 *   fan-out mapping's filter passes an order item's record only while `wakeAt` is set: that
 *   record is the wake-up that brings fan-out back to a held session, at no cost otherwise.
 * - `L#{above}#{position}#{source digest}`: one late event (`lateBelow` reads `L#{P}` onwards:
 *   every entry whose `above` is at or above `P`, one range read).
 * - `D#{source digest}`: how far the emitter's released events are known delivered (`through`,
 *   a position key), raised after each batch's deliveries, and the late events the latest step
 *   that had any delivered (`late`); apart from the order state so that writing it is not a
 *   stream record that wakes fan-out.
 * The log reads (`storedBetween`, `eventsAt`, `eventsIn`) are strongly consistent: the gap
 * check that lets the release point pass a position must see every event stored before it.
 */
import { BatchGetItemCommand, BatchWriteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { EMPTY_ORDER_STATE, withConfirmed } from '../relay/order/emitter-order.ts';
import type { HeldEvent, Hole, LateEntry, OrderRecord, OrderState, Place } from '../relay/order/emitter-order.ts';
import type { CommitOutcome, ConfirmedDelivery, EmitterSession, PlacedEvent, SessionOrderPort } from '../relay/ports/session-order.ts';
import type { Clock } from '../relay/ports/clock.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys, LATE_END, LATE_PREFIX, ORDER_PREFIX, POSITIONED_PREFIX, sourceDigest } from './keys.ts';
import { afterPositionKey, emitterKey, emitterOfKey, positionKey, positionOfKey } from './position-key.ts';
import { expiresAfter } from './table-access.ts';

const BATCH_GET_LIMIT = 100;
const BATCH_WRITE_LIMIT = 25;

export interface SessionOrderStoreOptions {
  tableName: string;
  now: Clock;
  /** How long order state and late entries are kept: the tenant's retention, as its events. */
  lifetimeSecondsOf: (tenant: string) => Promise<number>;
}

/** The stored form: places as `[epoch, seq]`, short names (the item stays under 1 KB, one write unit, in the usual case). */
interface StoredState {
  r: [number, number] | null;
  h: Array<[number, number, number]>;
  o: Array<[[number, number] | null, [number, number]]>;
  f: [number, number] | null;
  /** `delivered`; absent in a state written before it existed, whose release point counts as delivered. */
  d?: [number, number] | null;
  /** `pendingLate`. */
  p?: Array<[number, number]>;
}

const toPair = (place: Place): [number, number] => [place.epoch, place.seq];
const fromPair = ([epoch, seq]: [number, number]): Place => ({ epoch, seq });
const maybePair = (place: Place | null) => (place === null ? null : toPair(place));
const maybePlace = (pair: [number, number] | null | undefined) => (pair === null || pair === undefined ? null : fromPair(pair));

export function encodeOrderState(state: OrderState): string {
  const stored: StoredState = {
    r: maybePair(state.released),
    h: state.held.map((held) => [held.place.epoch, held.place.seq, held.storedAtMs]),
    o: state.holes.map((hole) => [maybePair(hole.after), toPair(hole.before)]),
    f: maybePair(state.forgotThrough),
    d: maybePair(state.delivered),
    p: state.pendingLate.map(toPair),
  };
  return JSON.stringify(stored);
}

export function decodeOrderState(text: string | undefined, version: number): OrderState {
  if (text === undefined) return { ...EMPTY_ORDER_STATE, version };
  const stored = JSON.parse(text) as StoredState;
  return {
    released: maybePlace(stored.r),
    held: stored.h.map(([epoch, seq, storedAtMs]): HeldEvent => ({ place: { epoch, seq }, storedAtMs })),
    holes: stored.o.map(([after, before]): Hole => ({ after: maybePlace(after), before: fromPair(before) })),
    forgotThrough: maybePlace(stored.f),
    delivered: stored.d === undefined ? maybePlace(stored.r) : maybePlace(stored.d),
    pendingLate: (stored.p ?? []).map(fromPair),
    version,
  };
}

/** The order state a stream record's new image carries (a wake-up), with its version. */
export function orderStateOfImage(image: Record<string, { S?: string; N?: string }> | undefined): { source: string; state: OrderState } | undefined {
  const source = image?.source?.S;
  const version = Number(image?.version?.N);
  if (source === undefined || !Number.isFinite(version)) return undefined;
  return { source, state: decodeOrderState(image?.o?.S, version) };
}

export class SessionOrderStore implements SessionOrderPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: SessionOrderStoreOptions,
  ) {}

  async load(key: EmitterSession): Promise<OrderState> {
    const [order, confirmed] = await Promise.all([
      this.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: this.orderKey(key), ProjectionExpression: 'o, version', ConsistentRead: true })),
      this.confirmedDelivery(key),
    ]);
    return withConfirmed(decodeOrderState(readString(order.Item, 'o'), readNumber(order.Item, 'version') ?? 0), confirmed);
  }

  async confirmedDelivery(key: EmitterSession): Promise<ConfirmedDelivery> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.deliveredKey(key), ProjectionExpression: 'through, late', ConsistentRead: true }),
    );
    const through = readString(item, 'through');
    return { through: through === undefined ? null : placeOfKey(through), late: (item?.late?.L ?? []).flatMap((entry) => (entry.S === undefined ? [] : [placeOfKey(entry.S)])) };
  }

  async confirmDelivered(key: EmitterSession, through: Place, late: readonly Place[]): Promise<void> {
    // The mark and the late events in one write while the mark rises (DynamoDB refuses a value the expression does not use).
    const values: Item = {
      ':kind': str('delivered'),
      ':expires': num(expiresAfter(this.options.now(), await this.options.lifetimeSecondsOf(key.tenant))),
      ...(late.length === 0 ? {} : { ':late': { L: late.map((place) => str(positionKey(place.epoch, place.seq))) } }),
    };
    const setLate = late.length === 0 ? '' : ', late = :late';
    const update = (expression: string, extra: Item = {}, condition?: string) =>
      this.client.send(new UpdateItemCommand({ TableName: this.options.tableName, Key: this.deliveredKey(key), UpdateExpression: expression, ...(condition === undefined ? {} : { ConditionExpression: condition }), ExpressionAttributeValues: { ...values, ...extra } }));
    try {
      await update(`SET kind = :kind, through = :through, expiresAt = :expires${setLate}`, { ':through': str(positionKey(through.epoch, through.seq)) }, 'attribute_not_exists(through) OR through < :through');
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Already confirmed as far or further: the mark stays. The late events this step delivered
      // are recorded all the same (a step may deliver only late events). The latest list stands:
      // it covers everything pending at its step; one written over by an older runner's costs
      // duplicates, never a miss.
      if (late.length > 0) await update(`SET kind = :kind, expiresAt = :expires${setLate}`);
    }
  }

  async commit(key: EmitterSession, expectedVersion: number, next: OrderState, wakeAtMs?: number): Promise<CommitOutcome> {
    const item: Item = {
      ...this.orderKey(key),
      kind: str('order'),
      session: str(key.session),
      source: str(key.source),
      o: str(encodeOrderState(next)),
      version: num(expectedVersion + 1),
      expiresAt: num(expiresAfter(this.options.now(), await this.options.lifetimeSecondsOf(key.tenant))),
      ...(wakeAtMs === undefined ? {} : { wakeAt: num(wakeAtMs) }),
    };
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: item,
          ConditionExpression: expectedVersion === 0 ? 'attribute_not_exists(version)' : 'version = :expected',
          ...(expectedVersion === 0 ? {} : { ExpressionAttributeValues: { ':expected': num(expectedVersion) } }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = error.Item === undefined ? await this.load(key) : decodeOrderState(readString(error.Item, 'o'), readNumber(error.Item, 'version') ?? 0);
      return { ok: false, current };
    }
  }

  async releasedPoints(tenant: string, session: string): Promise<Map<string, Place>> {
    const points = new Map<string, Place>();
    for (const item of await this.queryAll(eventKeys.sessionPartition(tenant, session), ORDER_PREFIX, `${ORDER_PREFIX}\uffff`, ['source', 'o'])) {
      const source = readString(item, 'source');
      const released = decodeOrderState(readString(item, 'o'), 0).released;
      if (source !== undefined && released !== null) points.set(source, released);
    }
    return points;
  }

  async storedBetween(key: EmitterSession, after: Place | null, before: Place, limit: number): Promise<OrderRecord[]> {
    const digest = sourceDigest(key.source);
    const low = after === null ? POSITIONED_PREFIX : `${POSITIONED_PREFIX}${afterPositionKey(after.epoch, after.seq)}`;
    const found: OrderRecord[] = [];
    // The range holds every emitter's events of the name; DynamoDB applies `Limit` before any
    // filter, so pages are read until this emitter's own `limit` are found or the range ends.
    for await (const page of this.pages(eventKeys.sessionPartition(key.tenant, key.session), low, `${POSITIONED_PREFIX}${positionKey(before.epoch, before.seq)}`, ['sk', 'storedAt'])) {
      for (const item of page) {
        const placed = this.placeOf(item, digest);
        if (placed !== undefined) found.push({ place: placed, storedAtMs: readNumber(item, 'storedAt') ?? 0 });
        if (found.length >= limit) return found;
      }
    }
    return found;
  }

  async eventsAt(key: EmitterSession, places: readonly Place[]): Promise<PlacedEvent[]> {
    const digest = sourceDigest(key.source);
    const partition = eventKeys.sessionPartition(key.tenant, key.session);
    const sortKeys = places.map((place) => eventKeys.positionSort(emitterKey(place.epoch, place.seq, digest)));
    const found = await this.batchGet(partition, sortKeys);
    return found.flatMap((item) => {
      const place = this.placeOf(item, digest);
      const raw = readString(item, 'raw');
      return place === undefined || raw === undefined ? [] : [{ place, raw }];
    }).sort((a, b) => (a.place.epoch - b.place.epoch) || (a.place.seq - b.place.seq));
  }

  async eventsIn(key: EmitterSession, after: Place | null, through: Place): Promise<PlacedEvent[]> {
    const digest = sourceDigest(key.source);
    const low = after === null ? POSITIONED_PREFIX : `${POSITIONED_PREFIX}${afterPositionKey(after.epoch, after.seq)}`;
    const items = await this.queryAll(eventKeys.sessionPartition(key.tenant, key.session), low, `${POSITIONED_PREFIX}${afterPositionKey(through.epoch, through.seq)}`, ['sk', 'raw']);
    return items.flatMap((item) => {
      const place = this.placeOf(item, digest);
      const raw = readString(item, 'raw');
      return place === undefined || raw === undefined ? [] : [{ place, raw }];
    });
  }

  async recordLate(key: EmitterSession, entries: readonly LateEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const digest = sourceDigest(key.source);
    const expiresAt = num(expiresAfter(this.options.now(), await this.options.lifetimeSecondsOf(key.tenant)));
    const puts = entries.map((entry) => ({
      PutRequest: {
        Item: {
          pk: str(eventKeys.sessionPartition(key.tenant, key.session)),
          sk: str(eventKeys.lateSort(positionKey(entry.above.epoch, entry.above.seq), emitterKey(entry.place.epoch, entry.place.seq, digest))),
          kind: str('late'),
          expiresAt,
        },
      },
    }));
    for (let start = 0; start < puts.length; start += BATCH_WRITE_LIMIT) {
      let requests: typeof puts | undefined = puts.slice(start, start + BATCH_WRITE_LIMIT);
      while (requests !== undefined && requests.length > 0) {
        const result = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.options.tableName]: requests } }));
        requests = result.UnprocessedItems?.[this.options.tableName] as typeof puts | undefined;
      }
    }
  }

  async lateBelow(tenant: string, session: string, below: Place): Promise<string[]> {
    const partition = eventKeys.sessionPartition(tenant, session);
    const belowKey = positionKey(below.epoch, below.seq);
    const eventSortKeys = new Set<string>();
    for (const item of await this.queryAll(partition, `${LATE_PREFIX}${belowKey}`, LATE_END, ['sk'])) {
      // `L#{above}#{position}#{digest}`: the late event's own key is what follows the above key.
      const sk = readString(item, 'sk') ?? '';
      const eventKey = sk.slice(LATE_PREFIX.length + belowKey.length + 1);
      if (eventKey.slice(0, belowKey.length) < belowKey) eventSortKeys.add(eventKeys.positionSort(eventKey));
    }
    const nowSec = Math.floor(this.options.now() / 1000);
    const found = await this.batchGet(partition, [...eventSortKeys]);
    return found
      .filter((item) => (readNumber(item, 'expiresAt') ?? Number.POSITIVE_INFINITY) > nowSec)
      .sort((a, b) => ((readString(a, 'sk') ?? '') < (readString(b, 'sk') ?? '') ? -1 : 1))
      .flatMap((item) => {
        const raw = readString(item, 'raw');
        return raw === undefined ? [] : [raw];
      });
  }

  private deliveredKey(key: EmitterSession): Item {
    return { pk: str(eventKeys.sessionPartition(key.tenant, key.session)), sk: str(eventKeys.deliveredSort(key.source)) };
  }

  private orderKey(key: EmitterSession): Item {
    return { pk: str(eventKeys.sessionPartition(key.tenant, key.session)), sk: str(eventKeys.orderSort(key.source)) };
  }

  /** The place of one of this emitter's event items, or undefined for another emitter's. */
  private placeOf(item: Item, digest: string): Place | undefined {
    const key = (readString(item, 'sk') ?? '').slice(POSITIONED_PREFIX.length);
    return emitterOfKey(key) === digest ? placeOfKey(key) : undefined;
  }

  /** Every item with `low <= sk <= high`, strongly consistent, all pages. */
  private async queryAll(partition: string, low: string, high: string, attributes: readonly string[]): Promise<Item[]> {
    const items: Item[] = [];
    for await (const page of this.pages(partition, low, high, attributes)) items.push(...page);
    return items;
  }

  /** The items with `low <= sk <= high`, strongly consistent, a page at a time. */
  private async *pages(partition: string, low: string, high: string, attributes: readonly string[]): AsyncGenerator<Item[]> {
    // Every name aliased: `source` and `raw` are DynamoDB reserved words.
    const names = Object.fromEntries(attributes.map((name, index) => [`#a${index}`, name]));
    let startKey: Item | undefined;
    do {
      const page: QueryCommandOutput = await this.client.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: { ':pk': str(partition), ':low': str(low), ':high': str(high) },
          ProjectionExpression: Object.keys(names).join(', '),
          ExpressionAttributeNames: names,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      yield page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  }

  private async batchGet(partition: string, sortKeys: readonly string[]): Promise<Item[]> {
    const found: Item[] = [];
    for (let start = 0; start < sortKeys.length; start += BATCH_GET_LIMIT) {
      let keys: Item[] | undefined = sortKeys.slice(start, start + BATCH_GET_LIMIT).map((sk) => ({ pk: str(partition), sk: str(sk) }));
      while (keys !== undefined && keys.length > 0) {
        const result = await this.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.options.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: '#raw, sk, expiresAt', ExpressionAttributeNames: { '#raw': 'raw' } } } }),
        );
        found.push(...(result.Responses?.[this.options.tableName] ?? []));
        keys = result.UnprocessedKeys?.[this.options.tableName]?.Keys as Item[] | undefined;
      }
    }
    return found;
  }
}

/** The place a position key (`{epoch}.{seq}`, zero-padded, `position-key.ts`) names. */
function placeOfKey(key: string): Place {
  const { epoch, seq } = positionOfKey('', key);
  return { epoch, seq };
}
