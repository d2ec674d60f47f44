/**
 * Connection slots (the tenant's `maxConnections`: open WebSocket connections plus live SSE
 * streams) held as leases, so a slot whose release never came is found and freed.
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
import { LIVE_STREAMS_POOL } from './ports/index.ts';
import type { ConnectionLease, ConnectionPoster, QuotasPort, SlotKind } from './ports/index.ts';
import { DEFAULT_MAX_CONNECTIONS } from './tenant-quotas.ts';

export interface SlotDependencies {
  quotas: QuotasPort;
  poster: ConnectionPoster;
  now: () => number;
}

/** A recount runs at most this often per tenant (it reads every lease of the tenant). */
export const RECOUNT_INTERVAL_MS = 5_000;
/** A socket lease this young may belong to a handshake still in `$connect`, which the gateway does not list yet. */
export const SOCKET_CHECK_MIN_AGE_MS = 60_000;
/** Most sockets one recount asks the gateway about, oldest first. */
export const SOCKET_CHECKS_PER_RECOUNT = 50;

/** Takes a tenant slot under a lease of `leaseMs`; answers the refusal's detail when the tenant stays at its quota. */
export async function takeConnectionSlot(slots: SlotDependencies, tenant: string, connectionId: string, kind: SlotKind, leaseMs: number): Promise<string | undefined> {
  const maxConnections = (await slots.quotas.quotasOf(tenant)).maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (await takeSlot(slots, tenant, maxConnections, connectionId, kind, leaseMs)) return undefined;
  return `the tenant's quota of ${maxConnections} open connections and streams is reached`;
}

/**
 * Takes one of the deployment's `maxLiveStreams` (the stream function's concurrency cap less
 * headroom, so this refusal is answered before Lambda throttles); 0 means no cap.
 */
export async function takeLiveStreamSlot(slots: SlotDependencies, streamId: string, maxLiveStreams: number, leaseMs: number): Promise<boolean> {
  return maxLiveStreams === 0 || takeSlot(slots, LIVE_STREAMS_POOL, maxLiveStreams, streamId, 'stream', leaseMs);
}

export function releaseLiveStreamSlot(slots: SlotDependencies, streamId: string, maxLiveStreams: number): Promise<void> {
  return maxLiveStreams === 0 ? Promise.resolve() : slots.quotas.releaseConnection(LIVE_STREAMS_POOL, streamId);
}

async function takeSlot(slots: SlotDependencies, pool: string, max: number, connectionId: string, kind: SlotKind, leaseMs: number): Promise<boolean> {
  const lease = (): ConnectionLease => ({ connectionId, kind, acquiredAtMs: slots.now(), leaseUntilMs: slots.now() + leaseMs });
  if (await slots.quotas.acquireConnection(pool, max, lease())) return true;
  return (await reclaimLostSlots(slots, pool)) > 0 && slots.quotas.acquireConnection(pool, max, lease());
}

/** Extends a running stream's leases (its tenant slot, and its live-stream slot when capped); false when a slot was reclaimed (the stream then ends, so the counts stay true). */
export async function renewStreamSlot(slots: SlotDependencies, tenant: string, streamId: string, leaseMs: number, maxLiveStreams = 0): Promise<boolean> {
  const until = slots.now() + leaseMs;
  const renewed = await Promise.all([
    slots.quotas.renewConnection(tenant, streamId, until),
    maxLiveStreams === 0 ? true : slots.quotas.renewConnection(LIVE_STREAMS_POOL, streamId, until),
  ]);
  return renewed.every(Boolean);
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
