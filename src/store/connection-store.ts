/**
 * WebSocket connection state in DynamoDB: the connection record (token facts, hello
 * declarations, lifecycle state), its subscriptions and its session claims.
 *
 * Layout (connections table):
 * - `T#{t}#C#{conn}` / `CONN`            the connection record
 * - `T#{t}#C#{conn}` / `SUB#{sub}`       a subscription the connection owns (for cleanup)
 * - `T#{t}#C#{conn}` / `CLAIM#{session}` a claim the connection owns (for cleanup)
 * - `T#{t}#SUBS#S#{session}` / `{conn}#{sub}` subscription index entry pinned to a session
 * - `T#{t}#SUBS#ANY` / `{conn}#{sub}`    subscription index entry not pinned to a session
 * - `T#{t}#CLAIMS` / `{len}:{session}#{conn}` a live claim, for routing and the roster
 *
 * The index entries are what fan-out and routing read; the connection's own records say
 * which index entries to delete when it goes away.
 */
import { BatchWriteItemCommand, DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient, WriteRequest } from '@aws-sdk/client-dynamodb';
import type { Principal } from '../auth/principal.ts';
import { isScope } from '../auth/scopes.ts';
import type { JsonObject } from '../protocol/event.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import { isConditionFailure, num, readNumber, readString, readStringSet, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { connectionKeys } from './keys.ts';

export type ConnectionState = 'connected' | 'hello-pending' | 'open' | 'rejected';
export type Role = 'emitter' | 'consumer' | 'both';

export interface HelloDeclarations {
  version: string;
  role: Role;
  /** The hello's identity object, verbatim (AEP-0003 §4). */
  identity: JsonObject;
  /** The hello's capabilities object, verbatim. */
  capabilities: JsonObject;
}

export interface ConnectionRecord {
  tenant: string;
  connectionId: string;
  principal: Principal;
  state: ConnectionState;
  connectedAtMs: number;
  /** API Gateway's receive time of the hello frame (ms), once one was recorded. */
  helloAtMs?: number;
  hello?: HelloDeclarations;
  subscriptionCount: number;
}

export type SubscriptionState = 'replaying' | 'live';

export interface CoveredPosition {
  epoch: number;
  seq: number;
}

export interface StoredSubscription {
  connectionId: string;
  subscriptionId: string;
  /** The validated attr-match filter, as JSON text. */
  filter: string;
  ceiling?: CaptureLevel;
  state: SubscriptionState;
  /** Matching events fan-out parked while the subscription was replaying (raw texts, stream order). */
  pending: string[];
  /**
   * Per session, the position the consumer already has (its resume point or the newest event
   * replayed to it): fan-out skips events at or below it that reach the stream late.
   */
  covered: Readonly<Record<string, CoveredPosition>>;
  /** The index entry's key, for the replay handoff. */
  indexKey: { pk: string; sk: string };
}

export interface ClaimDeclarations {
  agent?: string;
  instance?: string;
  control?: JsonObject;
  emits?: JsonObject[keyof JsonObject];
}

export interface StoredClaim {
  session: string;
  connectionId: string;
  declarations: ClaimDeclarations;
  expiresAtMs: number;
}

export interface ConnectionStoreOptions {
  tableName: string;
  now: () => number;
  /** Connection state outlives API Gateway's 2 h connection limit by this margin, then expires. */
  connectionLifetimeSeconds: number;
  /** Bound on what fan-out parks for a replaying subscription before delivering directly. */
  maxPendingBytes: number;
  /** Called once per removed connection record (releases the tenant's connection slot). */
  onConnectionRemoved?: (tenant: string) => Promise<void>;
}

export class ConnectionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: ConnectionStoreOptions,
  ) {}

  private expiresAt(): AttributeValue {
    return num(Math.floor(this.options.now() / 1000) + this.options.connectionLifetimeSeconds);
  }

  async createConnection(tenant: string, connectionId: string, principal: Principal): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(connectionKeys.connectionPartition(tenant, connectionId)),
          sk: str(connectionKeys.connectionRecord),
          tenant: str(tenant),
          connectionId: str(connectionId),
          tokenId: str(principal.tokenId),
          scopes: { SS: principal.scopes.length > 0 ? [...principal.scopes] : ['none'] },
          ...(principal.agents !== undefined && principal.agents.length > 0 ? { agents: { SS: [...principal.agents] } } : {}),
          state: str('connected'),
          connectedAt: num(this.options.now()),
          subCount: num(0),
          expiresAt: this.expiresAt(),
        },
      }),
    );
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.tokenLinkRecord), tokenId: str(principal.tokenId), expiresAt: this.expiresAt() },
      }),
    );
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: { pk: str(connectionKeys.tokenConnections(tenant, principal.tokenId)), sk: str(connectionId), connectionId: str(connectionId), expiresAt: this.expiresAt() },
      }),
    );
  }

  /** Connections and streams currently open with a token (for revocation). */
  async connectionsOfToken(tenant: string, tokenId: string): Promise<string[]> {
    return (await this.queryAll(connectionKeys.tokenConnections(tenant, tokenId))).map((item) => readString(item, 'connectionId') ?? '').filter((id) => id !== '');
  }

  async getConnection(tenant: string, connectionId: string): Promise<ConnectionRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
        ConsistentRead: true,
      }),
    );
    return result.Item === undefined ? undefined : connectionOf(tenant, result.Item);
  }

  /**
   * Records the first hello of a connection (state `hello-pending`). Returns false when a hello
   * was already recorded or the connection was refused, so a repeated hello changes nothing.
   */
  async recordHello(tenant: string, connectionId: string, hello: HelloDeclarations, helloAtMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: 'SET #state = :pending, #helloAt = :at, #version = :version, #role = :role, #identity = :identity, #capabilities = :capabilities',
          ConditionExpression: '#state = :connected',
          // Several of these names are DynamoDB reserved words; aliases keep every one safe.
          ExpressionAttributeNames: { '#state': 'state', '#helloAt': 'helloAt', '#version': 'version', '#role': 'role', '#identity': 'identity', '#capabilities': 'capabilities' },
          ExpressionAttributeValues: {
            ':pending': str('hello-pending'),
            ':connected': str('connected'),
            ':at': num(helloAtMs),
            ':version': str(hello.version),
            ':role': str(hello.role),
            ':identity': str(JSON.stringify(hello.identity)),
            ':capabilities': str(JSON.stringify(hello.capabilities)),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Moves the connection to `to` only if it is in `from` (lifecycle transitions are one-way). */
  async transition(tenant: string, connectionId: string, from: readonly ConnectionState[], to: ConnectionState): Promise<boolean> {
    const values: Record<string, AttributeValue> = { ':to': str(to) };
    from.forEach((state, index) => {
      values[`:from${index}`] = str(state);
    });
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: 'SET #state = :to',
          ConditionExpression: `#state IN (${from.map((_, index) => `:from${index}`).join(', ')})`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Records a subscription before its replay is read (so nothing written in between is
   * missed), in state `replaying`. Returns false when the connection is at `maxSubscriptions`.
   * A subscribe reusing a live id replaces that subscription.
   */
  async addSubscription(
    tenant: string,
    connectionId: string,
    subscription: { subscriptionId: string; filter: string; ceiling?: CaptureLevel; sessions?: readonly string[] },
    maxSubscriptions: number,
  ): Promise<boolean> {
    await this.removeSubscription(tenant, connectionId, subscription.subscriptionId);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: 'ADD subCount :one',
          ConditionExpression: 'attribute_exists(pk) AND subCount < :max',
          ExpressionAttributeValues: { ':one': num(1), ':max': num(maxSubscriptions) },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    const expiresAt = this.expiresAt();
    const indexPartitions =
      subscription.sessions === undefined
        ? [connectionKeys.tenantSubscriptions(tenant)]
        : subscription.sessions.map((session) => connectionKeys.sessionSubscriptions(tenant, session));
    const shared: Item = {
      connectionId: str(connectionId),
      subscriptionId: str(subscription.subscriptionId),
      filter: str(subscription.filter),
      ...(subscription.ceiling === undefined ? {} : { ceiling: str(subscription.ceiling) }),
      expiresAt,
    };
    // The owned record first: if anything after it fails, cleanup still finds the index entries.
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          pk: str(connectionKeys.connectionPartition(tenant, connectionId)),
          sk: str(connectionKeys.subscriptionRecord(subscription.subscriptionId)),
          indexPartitions: { SS: indexPartitions },
          ...shared,
        },
      }),
    );
    for (const partition of indexPartitions) {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            pk: str(partition),
            sk: str(connectionKeys.subscriptionIndexSort(connectionId, subscription.subscriptionId)),
            state: str('replaying'),
            ...shared,
          },
        }),
      );
    }
    return true;
  }

  /** Removes a subscription and its index entries; returns false when there was none. */
  async removeSubscription(tenant: string, connectionId: string, subscriptionId: string): Promise<boolean> {
    const key = { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.subscriptionRecord(subscriptionId)) };
    const result = await this.client.send(new DeleteItemCommand({ TableName: this.options.tableName, Key: key, ReturnValues: 'ALL_OLD' }));
    if (result.Attributes === undefined) return false;
    await this.deleteKeys(
      readStringSet(result.Attributes, 'indexPartitions').map((partition) => ({ pk: partition, sk: connectionKeys.subscriptionIndexSort(connectionId, subscriptionId) })),
    );
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
        UpdateExpression: 'ADD subCount :minus',
        ConditionExpression: 'attribute_exists(pk) AND subCount > :zero',
        ExpressionAttributeValues: { ':minus': num(-1), ':zero': num(0) },
      }),
    ).catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
    return true;
  }

  /** The subscription index entries a connection's subscription wrote (for the replay handoff). */
  async subscriptionEntries(tenant: string, connectionId: string, subscriptionId: string): Promise<StoredSubscription[]> {
    const owned = await this.client.send(
      new GetItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.subscriptionRecord(subscriptionId)) },
        ConsistentRead: true,
      }),
    );
    const entries: StoredSubscription[] = [];
    for (const partition of readStringSet(owned.Item, 'indexPartitions')) {
      const result = await this.client.send(
        new GetItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(partition), sk: str(connectionKeys.subscriptionIndexSort(connectionId, subscriptionId)) },
          ConsistentRead: true,
        }),
      );
      if (result.Item !== undefined) entries.push(subscriptionOf(result.Item));
    }
    return entries;
  }

  /** Subscriptions that may match events of these sessions: pinned to one of them, or unpinned. */
  async subscriptionsFor(tenant: string, sessions: readonly string[]): Promise<StoredSubscription[]> {
    const partitions = [connectionKeys.tenantSubscriptions(tenant), ...sessions.map((session) => connectionKeys.sessionSubscriptions(tenant, session))];
    const results = await Promise.all(partitions.map((partition) => this.queryAll(partition)));
    return results.flat().map(subscriptionOf);
  }

  /**
   * Parks a matching event on a replaying subscription (fan-out side of the replay handoff).
   * Returns false when the subscription is no longer replaying (deliver it live instead) or
   * its parking space is full.
   */
  async parkPending(subscription: StoredSubscription, raw: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(subscription.indexKey.pk), sk: str(subscription.indexKey.sk) },
          UpdateExpression: 'SET pending = list_append(if_not_exists(pending, :empty), :one), pendingBytes = if_not_exists(pendingBytes, :zero) + :bytes',
          ConditionExpression: '#state = :replaying AND (attribute_not_exists(pendingBytes) OR pendingBytes < :max)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':empty': { L: [] },
            ':one': { L: [str(raw)] },
            ':zero': num(0),
            ':bytes': num(Buffer.byteLength(raw)),
            ':replaying': str('replaying'),
            ':max': num(this.options.maxPendingBytes),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Ends the replay of one index entry: flips it to `live` only if no more events were parked
   * than the `drained` count the caller has delivered. Returns false when more arrived.
   */
  async goLive(subscription: StoredSubscription, drained: number, covered?: Readonly<Record<string, CoveredPosition>>): Promise<boolean> {
    const coveredText = covered === undefined || Object.keys(covered).length === 0 ? undefined : JSON.stringify(covered);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(subscription.indexKey.pk), sk: str(subscription.indexKey.sk) },
          UpdateExpression: coveredText === undefined ? 'SET #state = :live REMOVE pending, pendingBytes' : 'SET #state = :live, covered = :covered REMOVE pending, pendingBytes',
          ConditionExpression: drained === 0 ? 'attribute_not_exists(pending)' : 'size(pending) = :drained',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':live': str('live'),
            ...(drained === 0 ? {} : { ':drained': num(drained) }),
            ...(coveredText === undefined ? {} : { ':covered': str(coveredText) }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Records that a connection claims a session (AEP-0004 §4.5). Conditional, so a repeated
   * event does not rewrite the claim; a second connection's claim is a second item, never an
   * overwrite. Returns false when this connection already held the claim.
   */
  async claim(tenant: string, connectionId: string, session: string, declarations: ClaimDeclarations): Promise<boolean> {
    const expiresAt = this.expiresAt();
    let held = false;
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            pk: str(connectionKeys.connectionPartition(tenant, connectionId)),
            sk: str(connectionKeys.claimRecord(session)),
            session: str(session),
            expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      held = true;
    }
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: {
            pk: str(connectionKeys.tenantClaims(tenant)),
            sk: str(connectionKeys.claimIndexSort(session, connectionId)),
            session: str(session),
            connectionId: str(connectionId),
            declarations: str(JSON.stringify(declarations)),
            claimedAt: num(this.options.now()),
            expiresAt,
          },
          // A claim already held may still lack its index entry (the first attempt stopped
          // between the two writes, or its answer was lost): write it then, never rewrite it.
          ...(held ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
        }),
      );
    } catch (error) {
      if (!(held && isConditionFailure(error))) throw error;
    }
    return !held;
  }

  /** Live claims of one session (routing). */
  async claimsOf(tenant: string, session: string): Promise<StoredClaim[]> {
    return (await this.queryAll(connectionKeys.tenantClaims(tenant), connectionKeys.claimSessionPrefix(session))).map(claimOf).filter((claim) => this.isLive(claim));
  }

  /** Every live claim of a tenant (the roster, AEP-0003 §4.1). */
  async allClaims(tenant: string): Promise<StoredClaim[]> {
    return (await this.queryAll(connectionKeys.tenantClaims(tenant))).map(claimOf).filter((claim) => this.isLive(claim));
  }

  /**
   * Removes a connection and everything it owns: subscriptions, their index entries, claims.
   * The connection's quota slot is released exactly once, by whichever caller deleted its
   * record ($disconnect, a 410 during fan-out or routing, revocation).
   */
  async removeConnection(tenant: string, connectionId: string): Promise<void> {
    const owned = await this.queryAll(connectionKeys.connectionPartition(tenant, connectionId));
    const keys: Array<{ pk: string; sk: string }> = [];
    for (const item of owned) {
      const sk = readString(item, 'sk') ?? '';
      // The connection record goes last: once it is gone, everything it owned is gone too.
      if (sk === connectionKeys.connectionRecord) continue;
      keys.push({ pk: connectionKeys.connectionPartition(tenant, connectionId), sk });
      if (sk.startsWith('SUB#')) {
        const subscriptionId = readString(item, 'subscriptionId') ?? sk.slice(4);
        for (const partition of readStringSet(item, 'indexPartitions')) {
          keys.push({ pk: partition, sk: connectionKeys.subscriptionIndexSort(connectionId, subscriptionId) });
        }
      } else if (sk === connectionKeys.tokenLinkRecord) {
        keys.push({ pk: connectionKeys.tokenConnections(tenant, readString(item, 'tokenId') ?? ''), sk: connectionId });
      } else if (sk.startsWith('CLAIM#')) {
        keys.push({ pk: connectionKeys.tenantClaims(tenant), sk: connectionKeys.claimIndexSort(readString(item, 'session') ?? sk.slice(6), connectionId) });
      }
    }
    await this.deleteKeys(keys);
    const record = await this.client.send(
      new DeleteItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
        ReturnValues: 'ALL_OLD',
      }),
    );
    if (record.Attributes !== undefined) await this.options.onConnectionRemoved?.(tenant);
  }

  private isLive(claim: StoredClaim): boolean {
    return claim.expiresAtMs > this.options.now();
  }

  private async queryAll(partition: string, sortPrefix?: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: sortPrefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': str(partition), ...(sortPrefix === undefined ? {} : { ':prefix': str(sortPrefix) }) },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return items;
  }

  private async deleteKeys(keys: ReadonlyArray<{ pk: string; sk: string }>): Promise<void> {
    for (let offset = 0; offset < keys.length; offset += 25) {
      let requests: WriteRequest[] = keys.slice(offset, offset + 25).map((key) => ({ DeleteRequest: { Key: { pk: str(key.pk), sk: str(key.sk) } } }));
      for (let attempt = 0; requests.length > 0; attempt += 1) {
        const result = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.options.tableName]: requests } }));
        requests = result.UnprocessedItems?.[this.options.tableName] ?? [];
        if (requests.length > 0) {
          if (attempt >= 8) throw new Error(`could not delete ${requests.length} connection items after retries`);
          await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 25));
        }
      }
    }
  }
}

function connectionOf(tenant: string, item: Item): ConnectionRecord {
  const agents = readStringSet(item, 'agents');
  const version = readString(item, 'version');
  const role = readString(item, 'role') as Role | undefined;
  const helloAtMs = readNumber(item, 'helloAt');
  return {
    tenant,
    connectionId: readString(item, 'connectionId') ?? '',
    principal: {
      tenant,
      tokenId: readString(item, 'tokenId') ?? '',
      scopes: readStringSet(item, 'scopes').filter(isScope),
      ...(agents.length > 0 ? { agents } : {}),
    },
    state: (readString(item, 'state') ?? 'connected') as ConnectionState,
    connectedAtMs: readNumber(item, 'connectedAt') ?? 0,
    subscriptionCount: readNumber(item, 'subCount') ?? 0,
    ...(helloAtMs === undefined ? {} : { helloAtMs }),
    ...(version === undefined || role === undefined
      ? {}
      : {
          hello: {
            version,
            role,
            identity: parseObject(readString(item, 'identity')),
            capabilities: parseObject(readString(item, 'capabilities')),
          },
        }),
  };
}

function subscriptionOf(item: Item): StoredSubscription {
  const ceiling = readString(item, 'ceiling') as CaptureLevel | undefined;
  return {
    connectionId: readString(item, 'connectionId') ?? '',
    subscriptionId: readString(item, 'subscriptionId') ?? '',
    filter: readString(item, 'filter') ?? '{}',
    ...(ceiling === undefined ? {} : { ceiling }),
    state: (readString(item, 'state') ?? 'live') as SubscriptionState,
    pending: (item.pending?.L ?? []).map((entry) => entry.S ?? ''),
    covered: coveredOf(readString(item, 'covered')),
    indexKey: { pk: readString(item, 'pk') ?? '', sk: readString(item, 'sk') ?? '' },
  };
}

function coveredOf(text: string | undefined): Record<string, CoveredPosition> {
  if (text === undefined) return {};
  const parsed = parseObject(text);
  const covered: Record<string, CoveredPosition> = {};
  for (const [session, value] of Object.entries(parsed)) {
    const position = value as { epoch?: unknown; seq?: unknown } | null;
    if (typeof position?.epoch === 'number' && typeof position.seq === 'number') covered[session] = { epoch: position.epoch, seq: position.seq };
  }
  return covered;
}

function claimOf(item: Item): StoredClaim {
  return {
    session: readString(item, 'session') ?? '',
    connectionId: readString(item, 'connectionId') ?? '',
    declarations: parseObject(readString(item, 'declarations')) as ClaimDeclarations,
    expiresAtMs: (readNumber(item, 'expiresAt') ?? 0) * 1000,
  };
}

function parseObject(text: string | undefined): JsonObject {
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : {};
  } catch {
    return {};
  }
}
