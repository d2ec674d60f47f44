/** Connection state: the record of each open WebSocket connection or SSE stream. */
import type { Principal } from '../../auth/principal.ts';
import type { ConnectionRecord, ConnectionState, HelloDeclarations } from '../domain/connection.ts';
import type { VerifiedStanding } from '../domain/verified-standing.ts';

export interface ConnectionsPort {
  createConnection(tenant: string, connectionId: string, principal: Principal): Promise<void>;
  getConnection(tenant: string, connectionId: string): Promise<ConnectionRecord | undefined>;
  /**
   * Records the first hello of a connection (state `hello-pending`). False when a hello was
   * already recorded or the connection was refused, so a repeated hello changes nothing.
   * `by` names the frame's invocation: a retried write whose first attempt took effect (its
   * acknowledgement lost) is recognised as its own and answers true.
   */
  recordHello(tenant: string, connectionId: string, hello: HelloDeclarations, helloAtMs: number, by: string): Promise<boolean>;
  /** Records the verified standing the hello's identity card earned (AEP-0003 §8.3), before the connection opens. */
  recordVerified(tenant: string, connectionId: string, standing: VerifiedStanding): Promise<void>;
  /** Moves the connection to `to` only if it is in one of `from`; false when it was not (`by` as for `recordHello`). */
  transition(tenant: string, connectionId: string, from: readonly ConnectionState[], to: ConnectionState, by: string): Promise<boolean>;
  /** Connections and streams currently open with a token (for revocation). */
  connectionsOfToken(tenant: string, tokenId: string): Promise<string[]>;
  /**
   * Removes a connection and everything it owns (subscriptions, claims), releasing its quota
   * slot exactly once, whichever caller got there first.
   */
  removeConnection(tenant: string, connectionId: string): Promise<void>;
}
