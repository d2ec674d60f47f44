/** The relay's own domain types: what the ports take and return. */
export type { ClaimDeclarations, StoredClaim } from './claim.ts';
export type { ConnectionRecord, ConnectionState, HelloDeclarations } from './connection.ts';
export type { Deliverable } from './deliverable.ts';
export type { HistoryBudget, HistoryPage, HistoryRange, SessionActivity, SessionFilter, SessionSummary } from './history.ts';
export type { AdmittedEvent, AppendOutcome, HistoryItem, Page, SeqLessAnchor, WindowItem } from './stored-event.ts';
export type { NewSubscription, StoredSubscription, SubscriptionEntryKey, SubscriptionState } from './subscription.ts';
export type { TenantRecord, TokenGrant, TokenRecord } from './tenant.ts';
export { isTenantId, TENANT_ID_PATTERN } from './tenant-id.ts';
