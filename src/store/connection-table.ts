/**
 * The connections table's stores, built together over one client: connection records,
 * subscriptions, the replay handoff's parking, and session claims.
 *
 * Layout (connections table):
 * - `T#{t}#C#{conn}` / `CONN`            the connection record
 * - `T#{t}#C#{conn}` / `SUB#{sub}`       a subscription the connection owns (for cleanup)
 * - `T#{t}#C#{conn}` / `CLAIM#{session}` a claim the connection owns (for cleanup)
 * - `T#{t}#SUBS#S#{session}` / `{conn}#{sub}` subscription index entry pinned to a session
 * - `T#{t}#SUBS#K#{segment}` / `{conn}#{sub}` entry of an unpinned subscription naming types,
 *   under each first type segment it names (`tool`, `x`)
 * - `T#{t}#SUBS#ANY` / `{conn}#{sub}`    entry of a subscription constraining neither
 * - `T#{t}#CLAIMS` / `{len}:{session}#{conn}` a live claim, for routing and the roster
 *
 * The index entries are what fan-out and routing read; the connection's own records say
 * which index entries to delete when it goes away (`ConnectionStore.removeConnection`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import { ClaimStore } from './claim-store.ts';
import { ConnectionStore } from './connection-store.ts';
import { ParkingStore } from './parking-store.ts';
import { SubscriptionStore } from './subscription-store.ts';

export interface ConnectionTableOptions {
  tableName: string;
  now: Clock;
  /** Connection state outlives API Gateway's 2 h connection limit by this margin, then expires. */
  connectionLifetimeSeconds: number;
  /** Bound on what fan-out parks for a replaying subscription before delivering directly. */
  maxPendingBytes: number;
  /** Called on every removal (releases the connection's slot; releasing is idempotent, so a slot taken by a connection whose record was never written is released too). */
  onConnectionRemoved?: (tenant: string, connectionId: string) => Promise<void>;
}

export interface ConnectionTableStores {
  connections: ConnectionStore;
  subscriptions: SubscriptionStore;
  parking: ParkingStore;
  claims: ClaimStore;
}

export function connectionTableStores(client: DynamoDBClient, options: ConnectionTableOptions): ConnectionTableStores {
  const { tableName, now, connectionLifetimeSeconds } = options;
  return {
    connections: new ConnectionStore(client, { tableName, now, connectionLifetimeSeconds, ...(options.onConnectionRemoved === undefined ? {} : { onConnectionRemoved: options.onConnectionRemoved }) }),
    subscriptions: new SubscriptionStore(client, { tableName, now, connectionLifetimeSeconds }),
    parking: new ParkingStore(client, { tableName, maxPendingBytes: options.maxPendingBytes }),
    claims: new ClaimStore(client, { tableName, now, connectionLifetimeSeconds }),
  };
}
