/**
 * DynamoDB for the simulation: a `DynamoDBClient` stand-in (its `send`) that does what the
 * DynamoDB Developer Guide documents and nothing more, on virtual time.
 *
 * - Items per table keyed by `pk`/`sk`, sort keys ordered by their UTF-8 bytes; one global
 *   index read by scanning (the session summaries' listing), eventually consistent reads served
 *   from the same items (the relay's correctness must not lean on them being fresh, and nothing
 *   here is staler than DynamoDB may be).
 * - Conditional writes, `ReturnValuesOnConditionCheckFailure`, transactions all or nothing.
 * - `Query` reads up to `Limit` items **before** the filter expression is applied, pages with
 *   `LastEvaluatedKey`, and a page stops at 1 MB.
 * - Every call takes time; a write takes effect at one instant inside the call. A fault plan may
 *   make an attempt fail with throttling (nothing written), or answer a 500 after the write took
 *   effect (an acknowledgement lost), or hang until the SDK's request timeout abandons it. Like the SDK, a call makes up to `maxAttempts`
 *   attempts with exponential backoff and jitter before the error reaches the caller.
 * - A change to an item of a table with a stream is handed to the stream (`onChange`) at the
 *   instant it takes effect.
 * - Request units are counted as DynamoDB bills them (writes per KB of the larger image, a
 *   refused conditional write too, transactions twice; reads per 4 KB read before any filter,
 *   half for eventually consistent ones; at least one unit, or half, per request).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';
import { applyUpdate, compareValues, itemSizeBytes, matchesCondition, parseKeyCondition, project } from './dynamo-expressions.ts';
import type { Item, Placeholders } from './dynamo-expressions.ts';
import { copied } from '../kernel/copy.ts';

export type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

export interface ItemChange {
  table: string;
  eventName: StreamEventName;
  keys: Item;
  newImage?: Item;
  oldImage?: Item;
  atMs: number;
}

/** What one attempt of a call meets: nothing, throttling, a lost acknowledgement, or a stall of so many ms. */
export type DynamoFault = { kind: 'throttle' } | { kind: 'lost-ack' } | { kind: 'stall' } | undefined;

export interface SimulatedDynamoOptions {
  time: VirtualTime;
  random: Random;
  /** Tables by name, each with whether it streams changes. */
  tables: ReadonlyArray<{ name: string; stream: boolean; indexes?: ReadonlyArray<{ name: string; partitionKey: string; sortKey: string }> }>;
  /** Decides the fault (if any) one attempt of a call meets. */
  faultOf?: (command: string, table: string | undefined) => DynamoFault;
  onChange?: (change: ItemChange) => void;
  /** SDK attempts per call (the relay's client makes 6). */
  maxAttempts?: number;
  /** Typical latency of one request (ms). */
  latencyMs?: number;
  /** The SDK's request timeout: a stalled attempt is abandoned after it. */
  requestTimeoutMs?: number;
}

export interface Usage {
  readUnits: number;
  writeUnits: number;
  /** Write and read units by table and command (`events PutItemCommand`). */
  writesBy: Map<string, number>;
  readsBy: Map<string, number>;
  /** Refused conditional writes (billed, in `writeUnits` too). */
  refusedWrites: number;
  calls: Map<string, number>;
}

const PAGE_BYTES = 1024 * 1024;

interface Table {
  name: string;
  stream: boolean;
  indexes: ReadonlyArray<{ name: string; partitionKey: string; sortKey: string }>;
  partitions: Map<string, Partition>;
}

/** A partition's items in sort key order. */
interface Partition {
  keys: string[];
  items: Map<string, Item>;
}

function errorNamed(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, $metadata: {} }, extra);
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export class SimulatedDynamo {
  readonly usage: Usage = { readUnits: 0, writeUnits: 0, writesBy: new Map(), readsBy: new Map(), refusedWrites: 0, calls: new Map() };
  private readonly tables = new Map<string, Table>();
  private readonly maxAttempts: number;
  private readonly latencyMs: number;
  private readonly requestTimeoutMs: number;

  constructor(private readonly options: SimulatedDynamoOptions) {
    for (const table of options.tables) this.tables.set(table.name, { name: table.name, stream: table.stream, indexes: table.indexes ?? [], partitions: new Map() });
    this.maxAttempts = options.maxAttempts ?? 6;
    this.latencyMs = options.latencyMs ?? 4;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 8_000;
  }

  /** `DynamoDBClient.send`: the command's name picks the operation; its `input` is the request. */
  async send(command: { constructor: { name: string }; input: unknown }): Promise<unknown> {
    const name = command.constructor.name;
    const input = command.input as Record<string, unknown>;
    this.usage.calls.set(name, (this.usage.calls.get(name) ?? 0) + 1);
    const table = typeof input.TableName === 'string' ? input.TableName : undefined;
    for (let attempt = 1; ; attempt += 1) {
      const fault = this.options.faultOf?.(name, table);
      if (fault?.kind === 'stall') {
        // A request that hangs: it may take effect, but no answer comes before the SDK's
        // request timeout abandons it, and the attempt is retried like a lost acknowledgement.
        await this.options.time.sleep(this.options.random.next() * this.requestTimeoutMs);
        if (this.options.random.chance(0.5)) this.execute(name, input);
        await this.options.time.sleep(this.requestTimeoutMs);
        if (attempt < this.maxAttempts) continue;
        throw errorNamed('TimeoutError', `Connection timed out after ${this.requestTimeoutMs} ms`);
      }
      await this.options.time.sleep(this.options.random.latency(this.latencyMs / 2, 40));
      if (fault?.kind === 'throttle') {
        if (attempt < this.maxAttempts) {
          // The SDK's backoff: full jitter over an exponentially growing cap.
          await this.options.time.sleep(this.options.random.next() * Math.min(20_000, 50 * 2 ** attempt));
          continue;
        }
        throw errorNamed('ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded', { $retryable: { throttling: true } });
      }
      // The call takes effect now, all at once (a write is atomic per item; a query reads one snapshot).
      const output = this.execute(name, input);
      await this.options.time.sleep(this.options.random.latency(this.latencyMs / 2, 20));
      if (fault?.kind === 'lost-ack') {
        if (attempt < this.maxAttempts) {
          await this.options.time.sleep(this.options.random.next() * Math.min(20_000, 50 * 2 ** attempt));
          continue;
        }
        throw errorNamed('InternalServerError', 'Internal server error');
      }
      if (output instanceof Error) throw output;
      return output;
    }
  }

  destroy(): void {}

  /** Every item of a table (for the simulation's own checks, not a relay read). */
  itemsOf(tableName: string): Item[] {
    const table = this.tableNamed(tableName);
    return [...table.partitions.values()].flatMap((partition) => partition.keys.map((key) => partition.items.get(key) as Item));
  }

  private execute(name: string, input: Record<string, unknown>): unknown {
    const writesBefore = this.usage.writeUnits;
    const readsBefore = this.usage.readUnits;
    try {
      return this.executeCommand(name, input);
    } finally {
      const key = `${typeof input.TableName === 'string' ? input.TableName : Object.keys((input.RequestItems ?? {}) as object)[0] ?? 'transaction'} ${name}`;
      if (this.usage.writeUnits > writesBefore) this.usage.writesBy.set(key, (this.usage.writesBy.get(key) ?? 0) + this.usage.writeUnits - writesBefore);
      if (this.usage.readUnits > readsBefore) this.usage.readsBy.set(key, (this.usage.readsBy.get(key) ?? 0) + this.usage.readUnits - readsBefore);
    }
  }

  private executeCommand(name: string, input: Record<string, unknown>): unknown {
    requireUsedPlaceholders(input);
    switch (name) {
      case 'GetItemCommand':
        return this.getItem(input);
      case 'PutItemCommand':
        return this.putItem(input);
      case 'UpdateItemCommand':
        return this.updateItem(input);
      case 'DeleteItemCommand':
        return this.deleteItem(input);
      case 'QueryCommand':
        return this.query(input);
      case 'BatchGetItemCommand':
        return this.batchGet(input);
      case 'BatchWriteItemCommand':
        return this.batchWrite(input);
      case 'TransactWriteItemsCommand':
        return this.transactWrite(input);
      default:
        throw new Error(`the simulated DynamoDB does not implement ${name}`);
    }
  }

  private tableNamed(name: unknown): Table {
    const table = this.tables.get(String(name));
    if (table === undefined) return this.fail('ResourceNotFoundException', `table ${String(name)} not found`);
    return table;
  }

  private fail(name: string, message: string): never {
    throw errorNamed(name, message);
  }

  private placeholders(input: Record<string, unknown>): Placeholders {
    return { names: input.ExpressionAttributeNames as Record<string, string> | undefined, values: input.ExpressionAttributeValues as Record<string, AttributeValue> | undefined };
  }

  private read(table: Table, key: Item): Item | undefined {
    const pk = key.pk?.S;
    const sk = key.sk?.S;
    if (pk === undefined || sk === undefined) return this.fail('ValidationException', 'the key must name pk and sk');
    return table.partitions.get(pk)?.items.get(sk);
  }

  private write(table: Table, key: Item, next: Item | undefined, atMs: number): void {
    const pk = key.pk?.S as string;
    const sk = key.sk?.S as string;
    let partition = table.partitions.get(pk);
    const old = partition?.items.get(sk);
    if (next === undefined) {
      if (old === undefined || partition === undefined) return;
      partition.items.delete(sk);
      partition.keys.splice(partition.keys.indexOf(sk), 1);
    } else {
      if (partition === undefined) {
        partition = { keys: [], items: new Map() };
        table.partitions.set(pk, partition);
      }
      if (old === undefined) {
        let low = 0;
        let high = partition.keys.length;
        while (low < high) {
          const middle = (low + high) >> 1;
          if (byteCompare(partition.keys[middle] as string, sk) < 0) low = middle + 1;
          else high = middle;
        }
        partition.keys.splice(low, 0, sk);
      }
      partition.items.set(sk, copied(next));
    }
    if (table.stream) {
      this.options.onChange?.({
        table: table.name,
        eventName: old === undefined ? 'INSERT' : next === undefined ? 'REMOVE' : 'MODIFY',
        keys: { pk: { S: pk }, sk: { S: sk } },
        ...(next === undefined ? {} : { newImage: copied(next) }),
        ...(old === undefined ? {} : { oldImage: copied(old) }),
        atMs,
      });
    }
  }

  private writeUnits(before: Item | undefined, after: Item | undefined): number {
    return Math.max(1, Math.ceil(Math.max(before === undefined ? 0 : itemSizeBytes(before), after === undefined ? 0 : itemSizeBytes(after)) / 1024));
  }

  private conditionFailure(input: Record<string, unknown>, existing: Item | undefined): Error {
    this.usage.refusedWrites += 1;
    this.usage.writeUnits += this.writeUnits(existing, undefined);
    return errorNamed('ConditionalCheckFailedException', 'The conditional request failed', input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing !== undefined ? { Item: copied(existing) } : {});
  }

  private getItem(input: Record<string, unknown>): unknown {
    const table = this.tableNamed(input.TableName);
    const item = this.read(table, input.Key as Item);
    this.usage.readUnits += Math.max(1, Math.ceil((item === undefined ? 0 : itemSizeBytes(item)) / 4096)) * (input.ConsistentRead === true ? 1 : 0.5);
    return { ...(item === undefined ? {} : { Item: project(copied(item), input.ProjectionExpression as string | undefined, this.placeholders(input)) }) };
  }

  private putItem(input: Record<string, unknown>): unknown {
    const table = this.tableNamed(input.TableName);
    const item = input.Item as Item;
    const existing = this.read(table, item);
    if (!matchesCondition(input.ConditionExpression as string | undefined, existing, this.placeholders(input))) return this.conditionFailure(input, existing);
    this.usage.writeUnits += this.writeUnits(existing, item);
    this.write(table, item, item, this.options.time.now());
    return { ...(input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: copied(existing) } : {}) };
  }

  private updateItem(input: Record<string, unknown>): unknown {
    const table = this.tableNamed(input.TableName);
    const key = input.Key as Item;
    const existing = this.read(table, key);
    const placeholders = this.placeholders(input);
    if (!matchesCondition(input.ConditionExpression as string | undefined, existing, placeholders)) return this.conditionFailure(input, existing);
    const next = { ...applyUpdate(String(input.UpdateExpression), existing, placeholders), pk: key.pk as AttributeValue, sk: key.sk as AttributeValue };
    this.usage.writeUnits += this.writeUnits(existing, next);
    this.write(table, key, next, this.options.time.now());
    const returned = returnedValues(String(input.ReturnValues ?? 'NONE'), existing, next);
    return { ...(returned === undefined ? {} : { Attributes: copied(returned) }) };
  }

  private deleteItem(input: Record<string, unknown>): unknown {
    const table = this.tableNamed(input.TableName);
    const key = input.Key as Item;
    const existing = this.read(table, key);
    if (!matchesCondition(input.ConditionExpression as string | undefined, existing, this.placeholders(input))) return this.conditionFailure(input, existing);
    this.usage.writeUnits += this.writeUnits(existing, undefined);
    this.write(table, key, undefined, this.options.time.now());
    return { ...(input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: copied(existing) } : {}) };
  }

  private query(input: Record<string, unknown>): unknown {
    const table = this.tableNamed(input.TableName);
    const placeholders = this.placeholders(input);
    const index = input.IndexName === undefined ? undefined : table.indexes.find((candidate) => candidate.name === input.IndexName);
    if (input.IndexName !== undefined && index === undefined) return this.fail('ValidationException', `no index ${String(input.IndexName)}`);
    const partitionKey = index?.partitionKey ?? 'pk';
    const sortKey = index?.sortKey ?? 'sk';
    const condition = parseKeyCondition(String(input.KeyConditionExpression), placeholders, partitionKey, sortKey);
    let candidates: Item[];
    if (index === undefined) {
      const partition = table.partitions.get(condition.partition.S ?? '');
      candidates = partition === undefined ? [] : partition.keys.map((key) => partition.items.get(key) as Item);
    } else {
      candidates = this.itemsOf(table.name)
        .filter((item) => item[partitionKey]?.S === condition.partition.S && item[sortKey] !== undefined)
        .sort((a, b) => compareValues(a[sortKey], b[sortKey]) ?? 0);
    }
    candidates = candidates.filter((item) => condition.sortMatches(item[sortKey]));
    if (input.ScanIndexForward === false) candidates.reverse();
    const start = input.ExclusiveStartKey as Item | undefined;
    if (start !== undefined) {
      const at = candidates.findIndex((item) => item.pk?.S === start.pk?.S && item.sk?.S === start.sk?.S);
      candidates = at === -1 ? candidates.filter((item) => (compareValues(item[sortKey], start[sortKey]) ?? 0) * (input.ScanIndexForward === false ? -1 : 1) > 0) : candidates.slice(at + 1);
    }
    // Limit and the 1 MB page apply to what is read, before any filter.
    const limit = typeof input.Limit === 'number' ? input.Limit : Number.POSITIVE_INFINITY;
    const read: Item[] = [];
    let bytes = 0;
    for (const item of candidates) {
      if (read.length >= limit || bytes >= PAGE_BYTES) break;
      read.push(item);
      bytes += itemSizeBytes(item);
    }
    this.usage.readUnits += Math.max(1, Math.ceil(bytes / 4096)) * (input.ConsistentRead === true ? 1 : 0.5);
    const kept = read.filter((item) => matchesCondition(input.FilterExpression as string | undefined, item, placeholders));
    const last = read[read.length - 1];
    const more = read.length < candidates.length && last !== undefined;
    return {
      Items: kept.map((item) => project(copied(item), input.ProjectionExpression as string | undefined, placeholders)),
      Count: kept.length,
      ScannedCount: read.length,
      ...(more ? { LastEvaluatedKey: { pk: last.pk, sk: last.sk, ...(index === undefined ? {} : { [partitionKey]: last[partitionKey], [sortKey]: last[sortKey] }) } } : {}),
    };
  }

  private batchGet(input: Record<string, unknown>): unknown {
    const requests = input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean; ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string> }>;
    const responses: Record<string, Item[]> = {};
    for (const [tableName, request] of Object.entries(requests)) {
      const table = this.tableNamed(tableName);
      responses[tableName] = request.Keys.flatMap((key) => {
        const item = this.read(table, key);
        this.usage.readUnits += Math.max(1, Math.ceil((item === undefined ? 0 : itemSizeBytes(item)) / 4096)) * (request.ConsistentRead === true ? 1 : 0.5);
        return item === undefined ? [] : [project(copied(item), request.ProjectionExpression, { names: request.ExpressionAttributeNames })];
      });
    }
    return { Responses: responses, UnprocessedKeys: {} };
  }

  private batchWrite(input: Record<string, unknown>): unknown {
    const requests = input.RequestItems as Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>;
    const now = this.options.time.now();
    for (const [tableName, writes] of Object.entries(requests)) {
      const table = this.tableNamed(tableName);
      for (const request of writes) {
        const key = request.PutRequest?.Item ?? (request.DeleteRequest?.Key as Item);
        const existing = this.read(table, key);
        const next = request.PutRequest?.Item;
        this.usage.writeUnits += this.writeUnits(existing, next);
        this.write(table, key, next, now);
      }
    }
    return { UnprocessedItems: {} };
  }

  private transactWrite(input: Record<string, unknown>): unknown {
    type TransactItem = { Put?: Record<string, unknown>; Update?: Record<string, unknown>; Delete?: Record<string, unknown>; ConditionCheck?: Record<string, unknown> };
    const items = input.TransactItems as TransactItem[];
    const planned: Array<{ table: Table; key: Item; next: Item | undefined; before: Item | undefined }> = [];
    const reasons: Array<{ Code: string; Item?: Item }> = [];
    let cancelled = false;
    for (const entry of items) {
      const request = (entry.Put ?? entry.Update ?? entry.Delete ?? entry.ConditionCheck) as Record<string, unknown>;
      const table = this.tableNamed(request.TableName);
      const key = (request.Key ?? request.Item) as Item;
      const existing = this.read(table, key);
      const placeholders = this.placeholders(request);
      if (!matchesCondition(request.ConditionExpression as string | undefined, existing, placeholders)) {
        cancelled = true;
        reasons.push({ Code: 'ConditionalCheckFailed', ...(request.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing !== undefined ? { Item: copied(existing) } : {}) });
        continue;
      }
      reasons.push({ Code: 'None' });
      if (entry.ConditionCheck !== undefined) continue;
      const next = entry.Put !== undefined ? (request.Item as Item) : entry.Delete !== undefined ? undefined : { ...applyUpdate(String(request.UpdateExpression), existing, placeholders), pk: key.pk as AttributeValue, sk: key.sk as AttributeValue };
      planned.push({ table, key, next, before: existing });
    }
    if (cancelled) {
      this.usage.writeUnits += 2 * items.length;
      this.usage.refusedWrites += 1;
      return errorNamed('TransactionCanceledException', `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`, { CancellationReasons: reasons });
    }
    const now = this.options.time.now();
    for (const write of planned) {
      this.usage.writeUnits += 2 * this.writeUnits(write.before, write.next);
      this.write(write.table, write.key, write.next, now);
    }
    return {};
  }
}

/** What `ReturnValues` asks an update to return: whole items, or the attributes it changed (old or new). */
function returnedValues(kind: string, before: Item | undefined, after: Item): Item | undefined {
  if (kind === 'ALL_NEW') return after;
  if (kind === 'ALL_OLD') return before;
  if (kind !== 'UPDATED_OLD' && kind !== 'UPDATED_NEW') return undefined;
  const source = kind === 'UPDATED_OLD' ? before : after;
  const changed: Item = {};
  for (const name of new Set([...Object.keys(before ?? {}), ...Object.keys(after)])) {
    if (name === 'pk' || name === 'sk') continue;
    if (JSON.stringify(before?.[name]) === JSON.stringify(after[name])) continue;
    const value = source?.[name];
    if (value !== undefined) changed[name] = value;
  }
  return Object.keys(changed).length === 0 ? undefined : changed;
}

/** DynamoDB refuses a request that defines an expression name or value none of its expressions uses. */
function requireUsedPlaceholders(input: Record<string, unknown>): void {
  const requests = Array.isArray(input.TransactItems) ? (input.TransactItems as Array<Record<string, Record<string, unknown>>>).map((entry) => Object.values(entry)[0] as Record<string, unknown>) : [input];
  for (const request of requests) {
    const text = ['ConditionExpression', 'UpdateExpression', 'KeyConditionExpression', 'FilterExpression', 'ProjectionExpression'].map((field) => request[field]).filter((value): value is string => typeof value === 'string').join(' ');
    for (const field of ['ExpressionAttributeNames', 'ExpressionAttributeValues']) {
      for (const placeholder of Object.keys((request[field] ?? {}) as object)) {
        if (!usesPlaceholder(text, placeholder)) {
          throw Object.assign(new Error(`Value provided in ${field} unused in expressions: keys: {${placeholder}}`), { name: 'ValidationException', $metadata: {} });
        }
      }
    }
  }
}

/** Whether `text` uses `placeholder` (not merely a longer one it begins): answered once per pair, the expressions being few. */
const placeholderUse = new Map<string, boolean>();
function usesPlaceholder(text: string, placeholder: string): boolean {
  const key = `${placeholder}\u0000${text}`;
  let used = placeholderUse.get(key);
  if (used === undefined) {
    used = new RegExp(`${placeholder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`).test(text);
    if (placeholderUse.size >= 10_000) placeholderUse.clear();
    placeholderUse.set(key, used);
  }
  return used;
}
