/** The tenants table's stores, built together over one client: tenants, tokens, control policies and the cursor key. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import { ControlPolicyStore } from './control-policy-store.ts';
import { CursorKeyStore } from './cursor-key-store.ts';
import { TenantStore } from './tenant-store.ts';
import { TokenStore } from './token-store.ts';

export interface TenantTableStores {
  tenants: TenantStore;
  tokens: TokenStore;
  controlPolicies: ControlPolicyStore;
  cursorKeys: CursorKeyStore;
}

export function tenantTableStores(client: DynamoDBClient, tableName: string, now: Clock): TenantTableStores {
  // The token lookups carry their tenant's disabled flag; changing the flag updates them all.
  let tokens: TokenStore | undefined;
  const tenants = new TenantStore(client, tableName, now, (tenant, disabled) => (tokens as TokenStore).markTenantDisabled(tenant, disabled));
  tokens = new TokenStore(client, tableName, now, tenants);
  return { tenants, tokens, controlPolicies: new ControlPolicyStore(client, tableName), cursorKeys: new CursorKeyStore(client, tableName) };
}
