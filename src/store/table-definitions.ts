/**
 * The relay's DynamoDB tables, declared once. The CDK stack (`infra/`) and the local stack
 * (`local/`) both build their tables from these definitions, so what is tested locally is
 * what is deployed.
 *
 * Every partition key starts with the tenant (`T#{tenant}#…`) except token lookups, which
 * are keyed by a token hash because the tenant is what the lookup finds out.
 */

export type KeyAttributeType = 'S' | 'N';

export interface KeyAttribute {
  name: string;
  type: KeyAttributeType;
}

export interface LocalIndexDefinition {
  indexName: string;
  /** Shares the table's partition key; only the sort key differs. */
  sortKey: KeyAttribute;
  /** `ALL` so replay reads events straight from the index, with no second read per item. */
  projection: 'ALL' | 'KEYS_ONLY';
}

/** A global index: its own partition and sort key (sparse: only items carrying both are in it). Reads are eventually consistent. */
export interface GlobalIndexDefinition {
  indexName: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: 'ALL' | 'KEYS_ONLY';
}

export interface TableDefinition {
  /** Logical id, used in construct ids and environment variable names. */
  id: 'Events' | 'Connections' | 'Tenants';
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  localIndexes: LocalIndexDefinition[];
  globalIndexes: GlobalIndexDefinition[];
  /** Attribute holding an epoch-seconds expiry; DynamoDB deletes the item after it passes. */
  timeToLiveAttribute?: string;
  /** Whether the table streams new images (drives fan-out). */
  streamNewImages: boolean;
}

/**
 * Name of the session activity index on the events table: the tenant's session summaries
 * (`session-summaries.ts`) ordered by last activity, for `GET /sessions` newest first. Sparse:
 * only summary items carry `activityPk` and `activity`, so event writes never touch it.
 */
export const ACTIVITY_INDEX = 'byActivity';

/**
 * The event log. One partition per (tenant, session), an item per event, keyed by its position
 * (`P#{epoch}.{seq}`; seq-less events by `(source, id)`), so the partition reads back in
 * `(epoch, seq)` order with strongly consistent queries and admission is one conditional put:
 * one write per event, with no index to keep (an index entry costs at least one more write
 * unit per event, whatever it projects). See `event-log.ts` and `session-history.ts`.
 */
export const EVENTS_TABLE: TableDefinition = {
  id: 'Events',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  localIndexes: [],
  globalIndexes: [{ indexName: ACTIVITY_INDEX, partitionKey: { name: 'activityPk', type: 'S' }, sortKey: { name: 'activity', type: 'S' }, projection: 'ALL' }],
  timeToLiveAttribute: 'expiresAt',
  streamNewImages: true,
};

/** Connection state: hello declarations, subscriptions and session claims. */
export const CONNECTIONS_TABLE: TableDefinition = {
  id: 'Connections',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  localIndexes: [],
  globalIndexes: [],
  timeToLiveAttribute: 'expiresAt',
  streamNewImages: false,
};

/** Tenants and their hashed tokens. */
export const TENANTS_TABLE: TableDefinition = {
  id: 'Tenants',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  localIndexes: [],
  globalIndexes: [],
  timeToLiveAttribute: 'expiresAt',
  streamNewImages: false,
};

export const TABLE_DEFINITIONS: readonly TableDefinition[] = [EVENTS_TABLE, CONNECTIONS_TABLE, TENANTS_TABLE];

/** The physical names a deployment gives its tables (declared with the configuration, which carries them). */
export type { TableNames } from '../config/table-names.ts';
