/**
 * Every port of the relay, by the name use cases know it under: what each use case picks its
 * few dependencies from (`Pick<RelayPorts, ...>`). The composition root beside the entry points
 * (`functions/runtime/`) builds one object that holds them all, with the per-process state some
 * use cases keep (their own types, in their own folders); no use case receives it whole.
 */
import type { RelayConfig } from '../../config/relay-config.ts';
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
} from './index.ts';

export interface RelayPorts {
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
  tenants: TenantsPort;
  tokens: TokensPort;
  controlPolicies: ControlPoliciesPort;
  quotas: QuotasPort;
  /** Deliveries fan-out hands to SSE streams. */
  inbox: InboxPort;
  /** Posts to WebSocket clients; throws on first use when no management endpoint is configured. */
  poster: ConnectionPoster;
  /** Closes WebSocket connections when their token expires (`connection-deadline.ts`). */
  deadlines: ConnectionDeadlinesPort;
  /** The pending deadlines the deadline sweep reads and closes (`deadline-sweep.ts`). */
  deadlineIndex: DeadlineIndexPort;
  /** Per-tenant counts for operators (`ports/metrics.ts`); flushed by the entry points. */
  metrics: RelayMetrics;
  mintId: IdMinter;
  now: Clock;
}
