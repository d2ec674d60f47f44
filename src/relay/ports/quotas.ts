/**
 * Tenant quotas: the settings, the counters that enforce them without overshooting under
 * concurrent requests, and the connection slots, held as leases.
 */
import type { TenantQuotas } from '../tenant-quotas.ts';

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
 * Slots are counted per pool: a tenant (its `maxConnections`), or the deployment-wide pool of
 * live streams (the stream function's concurrency cap), named so it can never be a tenant id.
 */
export const LIVE_STREAMS_POOL = '*live-streams';

export interface QuotasPort {
  quotasOf(tenant: string): Promise<TenantQuotas>;
  /** Replaces the tenant's quotas; false when there is no such tenant. */
  setQuotas(tenant: string, quotas: TenantQuotas): Promise<boolean>;
  /** Takes one connection slot under this lease; false when the pool (a tenant, or LIVE_STREAMS_POOL) is at `max`. */
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
  /** Counts `count` events against this second's window; false when that would pass `perSecond`. */
  admitEvents(tenant: string, count: number, perSecond: number): Promise<boolean>;
}
