/**
 * Team sign-in's items in the tenants table, under the tenant's partition: its provider
 * settings (`IDP`: the settings as JSON, the client secret only sealed) and its sign-ins in
 * flight (`SIGNIN#{sha256 of the state or device handle}`, expiring by TTL and checked on read,
 * since TTL deletion lags). Finishing a sign-in deletes its item and reads it in one call, so a
 * code or device handle is redeemed once.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseRoleRuleSet } from '../auth/oidc/role-rules.ts';
import type { IdentityProviderSettings } from '../auth/oidc/identity-provider-settings.ts';
import type { IdentityProvidersPort, PendingSignIn } from '../auth/oidc/sign-in-ports.ts';
import type { Clock } from '../relay/ports/clock.ts';
import { num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export class IdentityProviderStore implements IdentityProvidersPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
  ) {}

  async getSettings(tenant: string): Promise<IdentityProviderSettings | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.identityProviderRecord), ConsistentRead: true }));
    return result.Item === undefined ? undefined : settingsOf(result.Item);
  }

  async putSettings(tenant: string, settings: IdentityProviderSettings): Promise<void> {
    const { sealedClientSecret, updatedAtMs, ...rest } = settings;
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(tenant, tenantKeys.identityProviderRecord),
          settings: str(JSON.stringify(rest)),
          updatedAt: num(updatedAtMs),
          ...(sealedClientSecret === undefined ? {} : { sealedClientSecret: str(sealedClientSecret) }),
        },
      }),
    );
  }

  async deleteSettings(tenant: string): Promise<boolean> {
    const result = await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.identityProviderRecord), ReturnValues: 'ALL_OLD' }));
    return result.Attributes !== undefined;
  }

  async putPending(tenant: string, key: string, pending: PendingSignIn): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...this.key(tenant, tenantKeys.pendingSignInRecord(key)), pending: str(JSON.stringify(pending)), expiresAt: num(Math.ceil(pending.expiresAtMs / 1000)) },
      }),
    );
  }

  async getPending(tenant: string, key: string): Promise<PendingSignIn | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.pendingSignInRecord(key)), ConsistentRead: true }));
    return this.pendingOf(result.Item);
  }

  async takePending(tenant: string, key: string): Promise<PendingSignIn | undefined> {
    const result = await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(tenant, tenantKeys.pendingSignInRecord(key)), ReturnValues: 'ALL_OLD' }));
    return this.pendingOf(result.Attributes);
  }

  private pendingOf(item: Item | undefined): PendingSignIn | undefined {
    const text = readString(item, 'pending');
    if (text === undefined) return undefined;
    const pending = JSON.parse(text) as PendingSignIn;
    return pending.expiresAtMs > this.now() ? pending : undefined;
  }

  private key(tenant: string, sort: string): Item {
    return { pk: str(tenantKeys.tenantPartition(tenant)), sk: str(sort) };
  }
}

/** Settings as stored; a stored rule set that no longer parses reads as one with no rules (fail closed: nobody signs in). */
function settingsOf(item: Item): IdentityProviderSettings | undefined {
  const text = readString(item, 'settings');
  if (text === undefined) return undefined;
  const stored = JSON.parse(text) as Omit<IdentityProviderSettings, 'sealedClientSecret' | 'updatedAtMs'>;
  const ruleSet = parseRoleRuleSet(stored.ruleSet);
  const sealedClientSecret = readString(item, 'sealedClientSecret');
  return {
    ...stored,
    ruleSet: ruleSet.ok ? ruleSet.value : { name: typeof stored.ruleSet?.name === 'string' ? stored.ruleSet.name : 'unreadable', rules: [] },
    updatedAtMs: readNumber(item, 'updatedAt') ?? 0,
    ...(sealedClientSecret === undefined ? {} : { sealedClientSecret }),
  };
}
