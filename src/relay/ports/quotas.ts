/**
 * Tenant quotas: the settings, the counters that enforce them without overshooting under
 * concurrent requests, and the connection slots, held as leases.
 */
import type { TenantQuotas } from '../domain/tenant-quotas.ts';

/** What holds a connection slot: an open WebSocket connection or a live SSE stream. */
export type SlotKind = 'socket' | 'stream';

/**
 * A connection slot, held until released or until `leaseUntilMs`, whichever comes first. A
 * stream renews its lease while it runs; a socket's lease runs to API Gateway's connection
 * limit, and a socket the gateway no longer knows can be reclaimed before that.
 */
export interface ConnectionLease {
  connectionId: string;
  kind: SlotKind;
  acquiredAtMs: number;
  leaseUntilMs: number;
}

/** The tenant's slot counter as last written, for a recount that must not race a take or a release. */
export interface SlotCount {
  count: number;
  /** Moves on every take, release and recount. */
  version: number;
  /** When a recount last ran (0: never). */
  recountedAtMs: number;
}

/**
 * Slots are counted per pool: a tenant (its `maxConnections`), a tenant's share of the
 * streams, or one shard of the deployment-wide pool of streams (the stream function's
 * concurrency cap). The pools that are not a tenant are named so they can never be a tenant id.
 */
export const LIVE_STREAMS_POOL = '*live-streams';

/** Shard `shard` of the deployment's stream pool (`connection-slots.ts` spreads the pool over shards). */
export function liveStreamsShard(shard: number): string {
  return `${LIVE_STREAMS_POOL}#${shard}`;
}

const TENANT_STREAMS_PREFIX = '*tenant-streams#';

/** The tenant's share of the stream pool (`AEP_SSE_MAX_STREAMS_PER_TENANT`). */
export function tenantStreamsPool(tenant: string): string {
  return `${TENANT_STREAMS_PREFIX}${tenant}`;
}

/** The pool a slot key names: a tenant's connections, a tenant's streams, or a shard of the deployment's stream pool. */
export type SlotPool = { kind: 'tenant'; tenant: string } | { kind: 'tenant-streams'; tenant: string } | { kind: 'streams-shard'; shard: string };

export function slotPoolOf(pool: string): SlotPool {
  if (pool.startsWith(TENANT_STREAMS_PREFIX)) return { kind: 'tenant-streams', tenant: pool.slice(TENANT_STREAMS_PREFIX.length) };
  if (pool.startsWith(`${LIVE_STREAMS_POOL}#`)) return { kind: 'streams-shard', shard: pool.slice(LIVE_STREAMS_POOL.length + 1) };
  return { kind: 'tenant', tenant: pool };
}

export interface QuotasPort {
  quotasOf(tenant: string): Promise<TenantQuotas>;
  /** Replaces the tenant's quotas; false when there is no such tenant. */
  setQuotas(tenant: string, quotas: TenantQuotas): Promise<boolean>;
  /** Takes one connection slot under this lease; false when the pool (a tenant, a tenant's streams, or a stream pool shard) is at `max`. */
  acquireConnection(tenant: string, max: number, lease: ConnectionLease): Promise<boolean>;
  /** Extends a held lease; false when the slot is no longer held (released or reclaimed). */
  renewConnection(tenant: string, connectionId: string, leaseUntilMs: number): Promise<boolean>;
  /** Gives the slot back; nothing happens when it is not held (a second release, or reclaimed). */
  releaseConnection(tenant: string, connectionId: string): Promise<void>;
  slotCount(tenant: string): Promise<SlotCount>;
  connectionLeases(tenant: string): Promise<ConnectionLease[]>;
  /**
   * Drops the `lost` leases (each only if it was not renewed since it was read) and sets the
   * counter to `liveCount`, unless a take or release moved the counter past `version`.
   */
  recountConnections(tenant: string, lost: readonly ConnectionLease[], liveCount: number, version: number): Promise<boolean>;
  /** Counts `count` events against the window of clock second `second` (epoch seconds); false when that would pass `perSecond`. */
  admitEvents(tenant: string, count: number, perSecond: number, second: number): Promise<boolean>;
}
