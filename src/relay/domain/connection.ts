/**
 * A WebSocket connection (or SSE stream) as the relay knows it: the token it opened with,
 * what its hello declared, and where it is in its lifecycle (AEP-0003 §3.5, §4).
 */
import type { Principal } from '../../auth/principal.ts';
import type { JsonObject } from '../../protocol/event.ts';
import type { Role } from '../../protocol/frames.ts';
import type { VerifiedStanding } from './verified-standing.ts';

/**
 * `connected` until a hello is recorded, `hello-pending` while it is answered, then `open`;
 * `rejected` once refused. Transitions only move forward.
 */
export type ConnectionState = 'connected' | 'hello-pending' | 'open' | 'rejected';

export interface HelloDeclarations {
  version: string;
  role: Role;
  /** The hello's identity object, verbatim (AEP-0003 §4). */
  identity: JsonObject;
  /** The hello's capabilities object, verbatim. */
  capabilities: JsonObject;
  /** Set when the hello's identity card verified (AEP-0003 §8.3): by whom, and until when. */
  verified?: VerifiedStanding;
}

export interface ConnectionRecord {
  tenant: string;
  connectionId: string;
  principal: Principal;
  state: ConnectionState;
  connectedAtMs: number;
  /** API Gateway's receive time of the hello frame (ms), once one was recorded. */
  helloAtMs?: number;
  hello?: HelloDeclarations;
  subscriptionCount: number;
}
