/**
 * WebSocket connection (and SSE stream) records in DynamoDB: the token facts, hello
 * declarations and lifecycle state, the token's index of its open connections, and removal of
 * everything a connection owns. Layout: `connection-table.ts`.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Principal } from '../auth/principal.ts';
import { isScope } from '../auth/scopes.ts';
import type { Role } from '../protocol/frames.ts';
import type { ConnectionRecord, ConnectionState, HelloDeclarations } from '../relay/domain/connection.ts';
import type { VerifiedStanding } from '../relay/domain/verified-standing.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { ConnectionsPort } from '../relay/ports/connections.ts';
import { isConditionFailure, num, parseJsonObject, readNumber, readString, readStringSet, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { connectionKeys } from './keys.ts';
import { deleteKeys, expiresAfter, queryAll } from './table-access.ts';

export interface ConnectionStoreOptions {
  tableName: string;
  now: Clock;
  /** Connection state outlives API Gateway's 2 h connection limit by this margin, then expires. */
  connectionLifetimeSeconds: number;
  /** Called on every removal (releases the connection's slot; releasing is idempotent, so a slot taken by a connection whose record was never written is released too). */
  onConnectionRemoved?: (tenant: string, connectionId: string) => Promise<void>;
}

export class ConnectionStore implements ConnectionsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: ConnectionStoreOptions,
  ) {}

  private expiresAt(): AttributeValue {
    return num(expiresAfter(this.options.now(), this.options.connectionLifetimeSeconds));
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

  async connectionsOfToken(tenant: string, tokenId: string): Promise<string[]> {
    return (await queryAll(this.client, this.options.tableName, connectionKeys.tokenConnections(tenant, tokenId))).map((item) => readString(item, 'connectionId') ?? '').filter((id) => id !== '');
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

  async recordHello(tenant: string, connectionId: string, hello: HelloDeclarations, helloAtMs: number, by: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: `SET #state = :pending, stateBy = :by, #helloAt = :at, #version = :version, #role = :role, #identity = :identity, #capabilities = :capabilities${hello.verified === undefined ? '' : ', verified = :verified'}`,
          ConditionExpression: '#state = :connected',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          // Several of these names are DynamoDB reserved words; aliases keep every one safe.
          ExpressionAttributeNames: { '#state': 'state', '#helloAt': 'helloAt', '#version': 'version', '#role': 'role', '#identity': 'identity', '#capabilities': 'capabilities' },
          ExpressionAttributeValues: {
            ':pending': str('hello-pending'),
            ':connected': str('connected'),
            ':by': str(by),
            ':at': num(helloAtMs),
            ':version': str(hello.version),
            ':role': str(hello.role),
            ':identity': str(JSON.stringify(hello.identity)),
            ':capabilities': str(JSON.stringify(hello.capabilities)),
            ...(hello.verified === undefined ? {} : { ':verified': str(JSON.stringify(hello.verified)) }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return wroteItself(error.Item, by, ['hello-pending', 'open']);
      throw error;
    }
  }

  async recordVerified(tenant: string, connectionId: string, standing: VerifiedStanding): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
        UpdateExpression: 'SET verified = :verified',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':verified': str(JSON.stringify(standing)) },
      }),
    );
  }

  async transition(tenant: string, connectionId: string, from: readonly ConnectionState[], to: ConnectionState, by: string): Promise<boolean> {
    const values: Record<string, AttributeValue> = { ':to': str(to), ':by': str(by) };
    from.forEach((state, index) => {
      values[`:from${index}`] = str(state);
    });
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
          UpdateExpression: 'SET #state = :to, stateBy = :by',
          ConditionExpression: `#state IN (${from.map((_, index) => `:from${index}`).join(', ')})`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return wroteItself(error.Item, by, [to]);
      throw error;
    }
  }

  /**
   * Removes a connection and everything it owns: subscriptions, their index entries, claims.
   * The connection's quota slot is released on every call ($disconnect, a 410 during fan-out
   * or routing, revocation); releasing is idempotent (the slot's lease goes once).
   */
  async removeConnection(tenant: string, connectionId: string): Promise<void> {
    const owned = await queryAll(this.client, this.options.tableName, connectionKeys.connectionPartition(tenant, connectionId));
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
    await deleteKeys(this.client, this.options.tableName, keys);
    await this.client.send(
      new DeleteItemCommand({
        TableName: this.options.tableName,
        Key: { pk: str(connectionKeys.connectionPartition(tenant, connectionId)), sk: str(connectionKeys.connectionRecord) },
      }),
    );
    await this.options.onConnectionRemoved?.(tenant, connectionId);
  }
}

/**
 * Whether a refused state change was this invocation's own, already in place: the SDK retries a
 * write whose acknowledgement was lost, and the retry's condition then fails on the first
 * attempt's result (a hello answered with silence, a refusal never sent, before this check).
 */
function wroteItself(item: Item | undefined, by: string, states: readonly ConnectionState[]): boolean {
  return readString(item, 'stateBy') === by && states.includes(readString(item, 'state') as ConnectionState);
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
            identity: parseJsonObject(readString(item, 'identity')),
            capabilities: parseJsonObject(readString(item, 'capabilities')),
            ...verifiedOf(item),
          },
        }),
  };
}

/** The hello's verified standing (`identity/verified-standing.ts`), when its card verified. */
function verifiedOf(item: Item): { verified?: VerifiedStanding } {
  const stored = parseJsonObject(readString(item, 'verified'));
  return typeof stored.operator === 'string' && typeof stored.key === 'string' && typeof stored.untilMs === 'number' ? { verified: { operator: stored.operator, key: stored.key, untilMs: stored.untilMs } } : {};
}
