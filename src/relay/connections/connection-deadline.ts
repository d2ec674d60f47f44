/**
 * Opening a WebSocket connection (`$connect`) and ending it when its token expires.
 *
 * Open: a quota slot, the connection's record, the token re-checked after the record exists
 * (the `$connect`-versus-revoke race, `revocation.ts`), and, when the token expires within
 * the connection's lifetime, a deadline at the expiry. At the deadline the connection gets a
 * `closing` frame with reason `token-expired` and is closed, like a revoked token's.
 */
import type { Principal } from '../../auth/principal.ts';
import { DEADLINE_REASONS } from '../ports/connection-deadlines.ts';
import type { ConnectionDeadline, DeadlineReason } from '../ports/connection-deadlines.ts';
import { takeConnectionSlot } from './connection-slots.ts';
import { confirmStillActive, endSocket } from './revocation.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';

/** What opening a socket and closing it at its deadline use. */
export type ConnectionDeadlineDeps = Pick<RelayPorts, 'config' | 'connections' | 'deadlineIndex' | 'deadlines' | 'metrics' | 'now' | 'poster' | 'quotas' | 'tokens'>;

export type ConnectOutcome = 'open' | 'limit-exceeded' | 'unauthorized';

export async function openConnection(runtime: Omit<ConnectionDeadlineDeps, 'deadlineIndex'>, principal: Principal, connectionId: string): Promise<ConnectOutcome> {
  const { tenant } = principal;
  // The socket's lease runs to API Gateway's connection limit; a lost $disconnect is found by asking the gateway.
  if ((await takeConnectionSlot(runtime, tenant, connectionId, 'socket', runtime.config.connectionLifetimeSeconds * 1000)) !== undefined) return 'limit-exceeded';
  await runtime.connections.createConnection(tenant, connectionId, principal);
  if (!(await confirmStillActive(runtime, principal))) {
    await runtime.connections.removeConnection(tenant, connectionId);
    return 'unauthorized';
  }
  const expiresAtMs = principal.expiresAtMs;
  // API Gateway closes every connection after 2 h; a later expiry needs no deadline.
  if (expiresAtMs !== undefined && expiresAtMs < runtime.now() + runtime.config.connectionLifetimeSeconds * 1000) {
    await runtime.deadlines.schedule({ tenant, connectionId, atMs: expiresAtMs, reason: 'token-expired' });
  }
  runtime.metrics.count('SocketsOpened', tenant);
  return 'open';
}

/** Ends the connection if it is still open (it may have closed long before its deadline). */
export async function reachDeadline(runtime: Pick<RelayPorts, 'connections' | 'poster'>, deadline: ConnectionDeadline): Promise<boolean> {
  if ((await runtime.connections.getConnection(deadline.tenant, deadline.connectionId)) === undefined) return false;
  await endSocket(runtime, deadline.tenant, deadline.connectionId, deadline.reason);
  return true;
}

/** What closing at a deadline came to: closed, already gone, or taken by another closer. */
export type DeadlineOutcome = 'closed' | 'gone' | 'taken';

/**
 * Closes the connection at its deadline, once: a deadline may be seen by two overlapping sweeps
 * and by its own invocation, and only the one that takes it out of the index closes. A close
 * that fails puts the deadline back, so the next sweep takes it (already due: at once).
 */
export async function closeAtDeadline(runtime: Pick<RelayPorts, 'connections' | 'poster' | 'deadlineIndex'>, deadline: ConnectionDeadline): Promise<DeadlineOutcome> {
  if (!(await runtime.deadlineIndex.claim(deadline))) return 'taken';
  try {
    return (await reachDeadline(runtime, deadline)) ? 'closed' : 'gone';
  } catch (error) {
    await runtime.deadlineIndex.restore(deadline);
    throw error;
  }
}

/** A deadline as received by the deadline function, or undefined when the payload is not one. */
export function deadlineOf(value: unknown): ConnectionDeadline | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tenant, connectionId, atMs, reason } = value as Record<string, unknown>;
  if (typeof tenant !== 'string' || typeof connectionId !== 'string' || typeof atMs !== 'number' || !(DEADLINE_REASONS as readonly string[]).includes(reason as string)) return undefined;
  return { tenant, connectionId, atMs, reason: reason as DeadlineReason };
}
