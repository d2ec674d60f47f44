/**
 * The relay's long-lived parts, expressed as ports: what every use case receives. Built once
 * per process by the composition root beside the entry points (`functions/runtime/`);
 * per-request state never lives here.
 */
import type { RelayConfig } from '../config/relay-config.ts';
import type {
  ClaimsPort,
  Clock,
  ConnectionDeadlinesPort,
  ConnectionPoster,
  ConnectionsPort,
  ControlPoliciesPort,
  DeadlineIndexPort,
  CursorKeysPort,
  EventLogPort,
  IdMinter,
  InboxPort,
  ParkingPort,
  QuotasPort,
  RelayMetrics,
  SessionOrderPort,
  SessionOwnersPort,
  SessionSummariesPort,
  SubscriptionsPort,
  TenantsPort,
  TokensPort,
} from './ports/index.ts';
import type { KnownOwners } from './session-ownership.ts';
import type { DeliveryLanesPort } from './ports/delivery-lanes.ts';
import type { BridgeRuntime } from './bridges/bridge-runtime.ts';
import type { IdentityRuntime } from './identity/identity-runtime.ts';
import type { KnownClaims } from './socket/known-claims.ts';
import type { FrameBudgets } from './socket/frame-budget.ts';
import type { EventAllowance } from './event-allowance.ts';
import type { RefusedTokens } from './refused-tokens.ts';

export interface RelayRuntime {
  config: RelayConfig;
  eventLog: EventLogPort;
  /** Per-session summaries for `GET /sessions`, kept up to date by fan-out. */
  sessionSummaries: SessionSummariesPort;
  /** Each emitter's session order: release points, late entries (`order/`). */
  sessionOrder: SessionOrderPort;
  /** Signs history and session-listing cursors. */
  cursorKeys: CursorKeysPort;
  connections: ConnectionsPort;
  subscriptions: SubscriptionsPort;
  /** Events parked on replaying subscriptions, and the flip to live (`subscription-handoff.ts`). */
  parking: ParkingPort;
  claims: ClaimsPort;
  /** The owning agent of each session (`session-ownership.ts`). */
  sessionOwners: SessionOwnersPort;
  /** Session owners this process already settled. */
  knownOwners: KnownOwners;
  tenants: TenantsPort;
  tokens: TokensPort;
  controlPolicies: ControlPoliciesPort;
  quotas: QuotasPort;
  /** Deliveries fan-out hands to SSE streams. */
  inbox: InboxPort;
  /** Runs a batch's extra delivery lanes (`fanout/delivery-lanes.ts`); absent, fan-out delivers every lane itself. */
  deliveryLanes?: DeliveryLanesPort;
  /** Posts to WebSocket clients; throws on first use when no management endpoint is configured. */
  poster: ConnectionPoster;
  /** Closes WebSocket connections when their token expires (`connection-deadline.ts`). */
  deadlines: ConnectionDeadlinesPort;
  /** The pending deadlines the deadline sweep reads and closes (`deadline-sweep.ts`). */
  deadlineIndex: DeadlineIndexPort;
  /** Claims this process already recorded (`handle-event.ts`). */
  knownClaims: KnownClaims;
  /** Each WebSocket connection's frame budget in this process (`socket/frame-budget.ts`). */
  frameBudgets: FrameBudgets;
  /** The tenants' events-per-second allowance this process claimed (`event-allowance.ts`). */
  eventAllowance: EventAllowance;
  /** Token digests this process found unknown, revoked or expired (`refused-tokens.ts`). */
  refusedTokens: RefusedTokens;
  /** AEP-0005 bridges: the tenants' sinks, their dead letters, and how requests reach them. */
  bridges: BridgeRuntime;
  /** Identity cards (AEP-0003 §8.3): the operators each tenant trusts, and their keys. */
  identity: IdentityRuntime;
  /** Per-tenant counts for operators (`ports/metrics.ts`); flushed by the entry points. */
  metrics: RelayMetrics;
  mintId: IdMinter;
  now: Clock;
}
