/**
 * Tokens (AEP-0003 §8.1 scoped bearer tokens). A token is stored twice: a record under its
 * tenant (for listing and revocation) and a lookup item keyed by the SHA-256 digest of its
 * secret. The secret itself is never stored.
 *
 * Resolving a request's token is one strongly consistent read of the lookup item (1 read unit):
 * the item carries a copy of its tenant's disabled flag (`tenantDisabled`), written at issuance
 * (under a condition on the tenant record, so an issuance racing a disable cannot miss it) and
 * rewritten on every lookup of the tenant when the flag changes, before the admin call answers.
 * Revocation and expiry are on the lookup item itself. A lookup written before the copy existed
 * has no `tenantDisabled` and is resolved the old way, reading the tenant record too.
 */
import { GetItemCommand, PutItemCommand, TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Principal } from '../auth/principal.ts';
import { isScope } from '../auth/scopes.ts';
import { digestsEqual } from '../auth/token-secret.ts';
import { isCaptureLevel } from '../protocol/levels.ts';
import type { TokenGrant, TokenRecord, TokenRef } from '../relay/domain/tenant.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { TenantsPort } from '../relay/ports/tenants.ts';
import type { TokenLookup, TokensPort } from '../relay/ports/tokens.ts';
import { personValue, readPerson } from './person-attribute.ts';
import { isConditionFailure, num, readNumber, readString, readStringSet, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';
import { queryAll } from './table-access.ts';

export class TokenStore implements TokensPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
    /** A token of a disabled tenant resolves to nothing. */
    private readonly tenants: Pick<TenantsPort, 'getTenant'>,
  ) {}

  /** One token of a tenant, without its digest; undefined when the tenant has no such token. */
  async getToken(tenant: string, tokenId: string): Promise<TokenRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tokenRecord(tokenId)) },
        ConsistentRead: true,
      }),
    );
    return result.Item === undefined ? undefined : tokenRecordOf(result.Item);
  }

  /** Stores a new token under its digest. The caller mints the secret and shows it once. */
  async putToken(grant: TokenGrant, secretDigest: string): Promise<void> {
    const createdAt = this.now();
    const tenantRecord = await this.tenants.getTenant(grant.tenant);
    const tenantDisabled = tenantRecord?.disabled === true;
    const shared: Item = {
      tenant: str(grant.tenant),
      tokenId: str(grant.tokenId),
      scopes: { SS: [...grant.scopes] },
      createdAt: num(createdAt),
      ...(grant.agents !== undefined && grant.agents.length > 0 ? { agents: { SS: [...grant.agents] } } : {}),
      ...(grant.expiresAtMs !== undefined ? { tokenExpiresAt: num(grant.expiresAtMs) } : {}),
      ...(grant.label !== undefined ? { label: str(grant.label) } : {}),
      ...(grant.maxCapture !== undefined ? { maxCapture: str(grant.maxCapture) } : {}),
      ...(grant.lineage !== undefined ? { lineage: str(grant.lineage) } : {}),
      ...(grant.operator !== undefined ? { operator: str(grant.operator) } : {}),
      ...(grant.issuedBy !== undefined ? { issuedBy: str(`${grant.issuedBy.tenant}/${grant.issuedBy.tokenId}`) } : {}),
      ...(grant.person !== undefined ? { person: personValue(grant.person) } : {}),
    };
    await this.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: { pk: str(tenantKeys.tenantPartition(grant.tenant)), sk: str(tenantKeys.tokenRecord(grant.tokenId)), digest: str(secretDigest), ...shared },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: { pk: str(tenantKeys.tokenHashPartition(secretDigest)), sk: str(tenantKeys.tokenHashSort), digest: str(secretDigest), tenantDisabled: { BOOL: tenantDisabled }, ...shared },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            // The copied flag is still the tenant's: a disable in between fails this issuance.
            ConditionCheck: {
              TableName: this.tableName,
              Key: { pk: str(tenantKeys.tenantPartition(grant.tenant)), sk: str(tenantKeys.tenantRecord) },
              ...(tenantRecord === undefined
                ? { ConditionExpression: 'attribute_not_exists(pk)' }
                : tenantDisabled
                  ? { ConditionExpression: 'disabled = :disabled', ExpressionAttributeValues: { ':disabled': { BOOL: true } } }
                  : { ConditionExpression: 'attribute_not_exists(disabled) OR disabled = :disabled', ExpressionAttributeValues: { ':disabled': { BOOL: false } } }),
            },
          },
          ...(grant.issuedBy === undefined ? [] : [{ Put: { TableName: this.tableName, Item: this.issuedItem(grant.issuedBy, { tenant: grant.tenant, tokenId: grant.tokenId }) } }]),
        ],
      }),
    );
  }

  /** Resolves a token digest to a principal, or undefined when the token is unknown, revoked, expired, or its tenant is disabled. */
  async resolve(secretDigest: string): Promise<Principal | undefined> {
    const found = await this.lookUp(secretDigest);
    return 'principal' in found ? found.principal : undefined;
  }

  /** One consistent read of the digest's lookup item (and, for a token written before the disabled flag was copied, its tenant record). */
  async lookUp(secretDigest: string): Promise<TokenLookup> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tokenHashPartition(secretDigest)), sk: str(tenantKeys.tokenHashSort) },
        ConsistentRead: true,
      }),
    );
    const item = result.Item;
    if (item === undefined || !digestsEqual(readString(item, 'digest') ?? '', secretDigest)) return { refused: 'unknown' };
    if (readNumber(item, 'revokedAt') !== undefined) return { refused: 'revoked' };
    const expiresAt = readNumber(item, 'tokenExpiresAt');
    if (expiresAt !== undefined && expiresAt <= this.now()) return { refused: 'expired' };
    const tenant = readString(item, 'tenant');
    const tokenId = readString(item, 'tokenId');
    if (tenant === undefined || tokenId === undefined) return { refused: 'unknown' };
    const tenantDisabled = item.tenantDisabled?.BOOL;
    if (tenantDisabled === true) return { refused: 'disabled', tenant };
    if (tenantDisabled === undefined) {
      const tenantRecord = await this.tenants.getTenant(tenant);
      if (tenantRecord === undefined || tenantRecord.disabled) return { refused: 'disabled', tenant };
    }
    const agents = readStringSet(item, 'agents');
    const maxCapture = maxCaptureOf(item);
    const lineage = readString(item, 'lineage');
    const operator = readString(item, 'operator');
    const person = readPerson(item);
    const principal: Principal = {
      tenant,
      tokenId,
      scopes: readStringSet(item, 'scopes').filter(isScope),
      ...(agents.length > 0 ? { agents } : {}),
      ...(expiresAt === undefined ? {} : { expiresAtMs: expiresAt }),
      ...(maxCapture === undefined ? {} : { maxCapture }),
      ...(lineage === undefined ? {} : { lineage }),
      ...(operator === undefined ? {} : { operator }),
      ...(person === undefined ? {} : { person }),
    };
    return { principal };
  }

  /** Copies a tenant's disabled flag onto the lookup item of each of its tokens. */
  async markTenantDisabled(tenant: string, disabled: boolean): Promise<void> {
    for (const item of await this.tokenItems(tenant)) {
      const digest = readString(item, 'digest');
      if (digest === undefined) continue;
      await this.client
        .send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: { pk: str(tenantKeys.tokenHashPartition(digest)), sk: str(tenantKeys.tokenHashSort) },
            UpdateExpression: 'SET tenantDisabled = :disabled',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':disabled': { BOOL: disabled } },
          }),
        )
        .catch((error: unknown) => {
          if (!isConditionFailure(error)) throw error;
        });
    }
  }

  /** Whether the token is still good: not revoked, not expired, its tenant enabled (two strongly consistent reads). */
  async isActive(tenant: string, tokenId: string): Promise<boolean> {
    const record = await this.getToken(tenant, tokenId);
    if (record === undefined || record.revokedAtMs !== undefined) return false;
    if (record.expiresAtMs !== undefined && record.expiresAtMs <= this.now()) return false;
    const tenantRecord = await this.tenants.getTenant(tenant);
    return tenantRecord !== undefined && !tenantRecord.disabled;
  }

  /** The tenant's tokens, without digests or secrets. */
  async listTokens(tenant: string): Promise<TokenRecord[]> {
    return (await this.tokenItems(tenant)).map(tokenRecordOf);
  }

  /** Every token record item of a tenant, as stored. */
  private async tokenItems(tenant: string): Promise<Item[]> {
    return queryAll(this.client, this.tableName, tenantKeys.tenantPartition(tenant), 'TOKEN#');
  }

  /** Marks a token revoked in both places; returns false when the tenant has no such token. */
  async revokeToken(tenant: string, tokenId: string): Promise<boolean> {
    const record = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tokenRecord(tokenId)) },
        ConsistentRead: true,
      }),
    );
    const digest = readString(record.Item, 'digest');
    if (digest === undefined) return false;
    const revokedAt = num(this.now());
    for (const key of [
      { pk: str(tenantKeys.tokenHashPartition(digest)), sk: str(tenantKeys.tokenHashSort) },
      { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(tenantKeys.tokenRecord(tokenId)) },
    ]) {
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': revokedAt },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return true;
  }

  async issuedBy(issuer: TokenRef): Promise<TokenRef[]> {
    const items = await queryAll(this.client, this.tableName, tenantKeys.tenantPartition(issuer.tenant), tenantKeys.issuedPrefix(issuer.tokenId));
    return items.flatMap((item) => {
      const tenant = readString(item, 'tenant');
      const tokenId = readString(item, 'tokenId');
      return tenant === undefined || tokenId === undefined ? [] : [{ tenant, tokenId }];
    });
  }

  async linkIssued(issuer: TokenRef, issued: TokenRef): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: this.issuedItem(issuer, issued) }));
  }

  private issuedItem(issuer: TokenRef, issued: TokenRef): Item {
    return { pk: str(tenantKeys.tenantPartition(issuer.tenant)), sk: str(tenantKeys.issuedRecord(issuer.tokenId, issued.tenant, issued.tokenId)), tenant: str(issued.tenant), tokenId: str(issued.tokenId) };
  }

  /** Whether a token with this digest exists (revoked or not). */
  async hasDigest(secretDigest: string): Promise<boolean> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: str(tenantKeys.tokenHashPartition(secretDigest)), sk: str(tenantKeys.tokenHashSort) },
        ProjectionExpression: 'pk',
        ConsistentRead: true,
      }),
    );
    return result.Item !== undefined;
  }
}

function tokenRecordOf(item: Item): TokenRecord {
  const agents = readStringSet(item, 'agents');
  const expiresAtMs = readNumber(item, 'tokenExpiresAt');
  const revokedAtMs = readNumber(item, 'revokedAt');
  const label = readString(item, 'label');
  const issuer = /^([a-z0-9-]+)\/(.+)$/.exec(readString(item, 'issuedBy') ?? '');
  const maxCapture = maxCaptureOf(item);
  const lineage = readString(item, 'lineage');
  const operator = readString(item, 'operator');
  const person = readPerson(item);
  return {
    tenant: readString(item, 'tenant') ?? '',
    tokenId: readString(item, 'tokenId') ?? '',
    scopes: readStringSet(item, 'scopes').filter(isScope),
    createdAtMs: readNumber(item, 'createdAt') ?? 0,
    ...(agents.length > 0 ? { agents } : {}),
    ...(expiresAtMs !== undefined ? { expiresAtMs } : {}),
    ...(revokedAtMs !== undefined ? { revokedAtMs } : {}),
    ...(label !== undefined ? { label } : {}),
    ...(maxCapture !== undefined ? { maxCapture } : {}),
    ...(lineage !== undefined ? { lineage } : {}),
    ...(operator !== undefined ? { operator } : {}),
    ...(issuer === null ? {} : { issuedBy: { tenant: issuer[1] as string, tokenId: issuer[2] as string } }),
    ...(person === undefined ? {} : { person }),
  };
}

/** A stored ceiling; an unknown value reads as the lowest level (fail closed), an absent one as none set. */
function maxCaptureOf(item: Item) {
  const stored = readString(item, 'maxCapture');
  if (stored === undefined) return undefined;
  return isCaptureLevel(stored) ? stored : 'none';
}
