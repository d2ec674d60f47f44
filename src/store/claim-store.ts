/**
 * Session claims in DynamoDB (AEP-0004 §4.5): the claim the connection owns (for cleanup) and
 * its entry in the tenant's claim partition, which routing and the roster read. Layout:
 * `connection-table.ts`.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimDeclarations, StoredClaim } from '../relay/domain/claim.ts';
import type { ClaimsPort } from '../relay/ports/claims.ts';
import type { Clock } from '../relay/ports/clock.ts';
import { isConditionFailure, num, parseJsonObject, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { connectionKeys } from './keys.ts';
import { expiresAfter, queryAll } from './table-access.ts';

export interface ClaimStoreOptions {
  tableName: string;
  now: Clock;
  /** Claims expire with their connection's state. */
  connectionLifetimeSeconds: number;
}

export class ClaimStore implements ClaimsPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: ClaimStoreOptions,
  ) {}

  /** Conditional, so a repeated event does not rewrite the claim; a second connection's claim is a second item, never an overwrite. */
  async claim(tenant: string, connectionId: string, session: string, declarations: ClaimDeclarations): Promise<boolean> {
    const expiresAt = num(expiresAfter(this.options.now(), this.options.connectionLifetimeSeconds));
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

  async claimsOf(tenant: string, session: string): Promise<StoredClaim[]> {
    return (await queryAll(this.client, this.options.tableName, connectionKeys.tenantClaims(tenant), connectionKeys.claimSessionPrefix(session))).map(claimOf).filter((claim) => this.isLive(claim));
  }

  async allClaims(tenant: string): Promise<StoredClaim[]> {
    return (await queryAll(this.client, this.options.tableName, connectionKeys.tenantClaims(tenant))).map(claimOf).filter((claim) => this.isLive(claim));
  }

  /** Claims expire by TTL, which runs late (and never on DynamoDB Local): expired ones are ignored. */
  private isLive(claim: StoredClaim): boolean {
    return claim.expiresAtMs > this.options.now();
  }
}

function claimOf(item: Item): StoredClaim {
  return {
    session: readString(item, 'session') ?? '',
    connectionId: readString(item, 'connectionId') ?? '',
    declarations: parseJsonObject(readString(item, 'declarations')) as ClaimDeclarations,
    expiresAtMs: (readNumber(item, 'expiresAt') ?? 0) * 1000,
  };
}
