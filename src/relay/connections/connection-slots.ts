/**
 * Connection slots (the tenant's `maxConnections`: open WebSocket connections plus SSE
 * streams; a tenant's share of the stream pool; the deployment's stream pool) held as leases,
 * so a slot whose release never came is found and freed.
 *
 * Why leases: API Gateway's `$disconnect` is best effort, and a streaming function killed by
 * its timeout or a crash never runs its cleanup (DESIGN.md hazard 12). A plain counter would
 * drift upwards until the tenant is refused everything. Each slot is therefore a lease:
 * - a stream's lasts `sse.slotLeaseMs` and the running stream renews it (`renewStreamSlot`);
 * - a socket's lasts the connection's lifetime (API Gateway closes any connection after 2 h),
 *   and before that the gateway itself says whether the connection still exists.
 * When a take finds the tenant at its quota, the leases are read and the lost ones (expired,
 * or sockets the gateway no longer has) are dropped and the counter recounted, then the take
 * is tried once more. So a lost `$disconnect` costs nothing until the slot is needed, and is
 * freed at that moment; a lost stream cleanup within its lease.
 */
import { liveStreamsShard, tenantStreamsPool } from '../ports/index.ts';
import type { ConnectionLease, ConnectionPoster, QuotasPort, SlotKind } from '../ports/index.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../domain/tenant-quotas.ts';

export interface SlotDependencies {
  quotas: QuotasPort;
  poster: ConnectionPoster;
  now: () => number;
}

/** A recount runs at most this often per tenant (it reads every lease of the tenant). */
export const RECOUNT_INTERVAL_MS = 5_000;
/**
 * A socket lease this young may belong to a handshake still in `$connect`, which the gateway does
 * not list yet: longer than the socket function's timeout (28 s), so `$connect` has certainly
 * ended. A refused `$connect` takes its own slot back at once (`functions/socket/route.ts`);
 * this bounds how long one whose take-back failed too keeps the tenant's slot.
 */
export const SOCKET_CHECK_MIN_AGE_MS = 30_000;
/** Most sockets one recount asks the gateway about, oldest first. */
export const SOCKET_CHECKS_PER_RECOUNT = 50;

/** Takes a tenant slot under a lease of `leaseMs`; answers the refusal's detail when the tenant stays at its quota. */
export async function takeConnectionSlot(slots: SlotDependencies, tenant: string, connectionId: string, kind: SlotKind, leaseMs: number): Promise<string | undefined> {
  const maxConnections = (await slots.quotas.quotasOf(tenant)).maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (await takeSlot(slots, tenant, maxConnections, connectionId, kind, leaseMs)) return undefined;
  return `the tenant's quota of ${maxConnections} open connections and streams is reached`;
}

/** What a stream's slots are sized by (`SseSettings`). */
export interface StreamSlotSettings {
  /** The deployment's pool (0: no pool). */
  maxLiveStreams: number;
  /** One tenant's share of it (0: no share). */
  maxStreamsPerTenant: number;
  slotLeaseMs: number;
}

/** The slots a running stream holds, for its renewals and its release. */
export interface StreamSlots {
  tenant: string;
  streamId: string;
  /** The pool shard it took (absent without a pool). */
  shard?: number;
  /** Whether it took a place in the tenant's share. */
  shared: boolean;
}

/** Why a stream was refused: its tenant's share, its tenant's connection quota, or the deployment's pool. */
export type StreamRefusal = { refused: 'tenant-share' | 'tenant-quota' | 'pool'; detail: string };

/** Slots per pool shard this size or more get a shard of their own, up to `MAX_POOL_SHARDS`. */
export const SLOTS_PER_POOL_SHARD = 50;
export const MAX_POOL_SHARDS = 8;

/**
 * The capacity of each shard of a pool of `max` slots: about `SLOTS_PER_POOL_SHARD` each, at
 * most `MAX_POOL_SHARDS`, adding up to `max` exactly.
 */
export function poolShardCapacities(max: number): number[] {
  if (max === 0) return [];
  const shards = Math.min(MAX_POOL_SHARDS, Math.ceil(max / SLOTS_PER_POOL_SHARD));
  return Array.from({ length: shards }, (_, shard) => Math.floor(max / shards) + (shard < max % shards ? 1 : 0));
}

/**
 * Takes a stream's slots, every stream alike (live or replay-only: each holds an instance of
 * the stream function while it runs): first the tenant's share of the pool, then the tenant's
 * connection quota, then one slot of the pool. In that order, a tenant at its share or its
 * quota never takes a pool slot another tenant could have had. The pool slot is taken in a
 * shard picked by `pick` (random) and, that shard being full, in each other shard in turn, so
 * a stream is refused only when every shard is full: the pool's bound is exact. Whatever was
 * taken before a refusal is given back.
 */
export async function takeStreamSlots(slots: SlotDependencies, tenant: string, streamId: string, settings: StreamSlotSettings, pick: (shards: number) => number): Promise<StreamSlots | StreamRefusal> {
  const { maxLiveStreams, maxStreamsPerTenant, slotLeaseMs } = settings;
  const shared = maxStreamsPerTenant > 0;
  if (shared && !(await takeSlot(slots, tenantStreamsPool(tenant), maxStreamsPerTenant, streamId, 'stream', slotLeaseMs))) {
    return { refused: 'tenant-share', detail: `the tenant's share of ${maxStreamsPerTenant} concurrent streams (of the relay's ${maxLiveStreams}) is reached; end a stream, or use the WebSocket binding` };
  }
  const quotaRefusal = await takeConnectionSlot(slots, tenant, streamId, 'stream', slotLeaseMs);
  if (quotaRefusal !== undefined) {
    if (shared) await slots.quotas.releaseConnection(tenantStreamsPool(tenant), streamId);
    return { refused: 'tenant-quota', detail: quotaRefusal };
  }
  const taken: StreamSlots = { tenant, streamId, shared };
  const capacities = poolShardCapacities(maxLiveStreams);
  if (capacities.length === 0) return taken;
  const first = pick(capacities.length);
  for (let step = 0; step < capacities.length; step += 1) {
    const shard = (first + step) % capacities.length;
    if (await takeSlot(slots, liveStreamsShard(shard), capacities[shard] as number, streamId, 'stream', slotLeaseMs)) return { ...taken, shard };
  }
  await releaseStreamSlots(slots, taken);
  return { refused: 'pool', detail: `the relay serves ${maxLiveStreams} streams at once and all are taken; retry later, or use the WebSocket binding` };
}

/**
 * Gives back every slot a stream holds; each release is idempotent. `tenantSlotReleased`: the
 * stream's connection record was removed, which gave its tenant slot back already.
 */
export async function releaseStreamSlots(slots: SlotDependencies, held: StreamSlots, tenantSlotReleased = false): Promise<void> {
  await Promise.all([
    tenantSlotReleased ? undefined : slots.quotas.releaseConnection(held.tenant, held.streamId),
    held.shared ? slots.quotas.releaseConnection(tenantStreamsPool(held.tenant), held.streamId) : undefined,
    held.shard === undefined ? undefined : slots.quotas.releaseConnection(liveStreamsShard(held.shard), held.streamId),
  ]);
}

async function takeSlot(slots: SlotDependencies, pool: string, max: number, connectionId: string, kind: SlotKind, leaseMs: number): Promise<boolean> {
  const lease = (): ConnectionLease => ({ connectionId, kind, acquiredAtMs: slots.now(), leaseUntilMs: slots.now() + leaseMs });
  if (await slots.quotas.acquireConnection(pool, max, lease())) return true;
  return (await reclaimLostSlots(slots, pool)) > 0 && slots.quotas.acquireConnection(pool, max, lease());
}

/** Extends a running stream's leases (its tenant slot, its share and its pool slot); false when one was reclaimed (the stream then ends, so the counts stay true). */
export async function renewStreamSlots(slots: SlotDependencies, held: StreamSlots, leaseMs: number): Promise<boolean> {
  const until = slots.now() + leaseMs;
  const renewed = await Promise.all([
    slots.quotas.renewConnection(held.tenant, held.streamId, until),
    held.shared ? slots.quotas.renewConnection(tenantStreamsPool(held.tenant), held.streamId, until) : true,
    held.shard === undefined ? true : slots.quotas.renewConnection(liveStreamsShard(held.shard), held.streamId, until),
  ]);
  return renewed.every(Boolean);
}

/**
 * Renews a stream's slots every third of their lease until stopped, for work that cannot renew
 * as it goes (a replay, which may take the stream's whole life); `lost` says whether a renewal
 * found a slot reclaimed, after which the stream must end.
 */
export function keepStreamSlots(slots: SlotDependencies, held: StreamSlots, leaseMs: number, onError: (error: unknown) => void): { stop: () => void; lost: () => boolean } {
  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = renewing
      .then(async () => {
        if (!(await renewStreamSlots(slots, held, leaseMs))) lost = true;
      })
      .catch(onError);
  }, leaseMs / 3);
  return { stop: () => clearInterval(timer), lost: () => lost };
}

/** Drops a pool's lost leases and recounts; answers how many slots that freed. */
export async function reclaimLostSlots(slots: SlotDependencies, tenant: string): Promise<number> {
  const counted = await slots.quotas.slotCount(tenant);
  if (slots.now() - counted.recountedAtMs < RECOUNT_INTERVAL_MS) return 0;
  const leases = await slots.quotas.connectionLeases(tenant);
  const now = slots.now();
  const expired = leases.filter((lease) => lease.leaseUntilMs <= now);
  const sockets = leases
    .filter((lease) => lease.kind === 'socket' && lease.leaseUntilMs > now && now - lease.acquiredAtMs >= SOCKET_CHECK_MIN_AGE_MS)
    .sort((left, right) => left.acquiredAtMs - right.acquiredAtMs)
    .slice(0, SOCKET_CHECKS_PER_RECOUNT);
  // A gateway that cannot answer (throttled, unreachable) leaves the socket counted.
  const open = await Promise.all(sockets.map((lease) => slots.poster.isOpen(lease.connectionId).catch(() => true)));
  const gone = sockets.filter((_lease, index) => open[index] === false);
  const lost = [...expired, ...gone];
  const live = leases.length - lost.length;
  if (!(await slots.quotas.recountConnections(tenant, lost, live, counted.version))) return 0;
  return Math.max(0, counted.count - live);
}
