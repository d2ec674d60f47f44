/** The interfaces the relay speaks to; `src/store` and `src/gateway` implement them. */
export type { ClaimsPort } from './claims.ts';
export type { Clock } from './clock.ts';
export type { ConnectionDeadline, ConnectionDeadlinesPort } from './connection-deadlines.ts';
export type { ConnectionPoster, PostOptions, PostOutcome } from './connection-poster.ts';
export type { ConnectionsPort } from './connections.ts';
export type { ControlPoliciesPort } from './control-policies.ts';
export type { EventLogPort } from './event-log.ts';
export type { IdMinter } from './ids.ts';
export type { InboxItem, InboxPort } from './inbox.ts';
export type { ParkingPort } from './parking.ts';
export type { QuotasPort } from './quotas.ts';
export type { SessionOwnersPort } from './session-owners.ts';
export type { SubscriptionsPort } from './subscriptions.ts';
export type { TenantsPort } from './tenants.ts';
export type { TokensPort } from './tokens.ts';
