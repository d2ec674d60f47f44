/** Where a tenant's push subscriptions are kept, with a short-lived note of who was sent which request. */
import type { PushSubscriptionRecord } from './push-subscription.ts';

export interface PushSubscriptionsPort {
  /** Every subscription of the tenant (bounded by `MAX_PUSH_SUBSCRIPTIONS_PER_TENANT`). */
  list(tenant: string): Promise<PushSubscriptionRecord[]>;
  get(tenant: string, id: string): Promise<PushSubscriptionRecord | undefined>;
  /** Stores it, replacing one with the same id (the same browser subscribing again). */
  put(tenant: string, record: PushSubscriptionRecord): Promise<void>;
  /** True when there was one to remove. */
  remove(tenant: string, id: string): Promise<boolean>;
  /** Notes that these subscriptions were sent a request, so its follow-up reaches exactly them. */
  markNotified(tenant: string, session: string, requestId: string, subscriptionIds: readonly string[], expiresAtMs: number): Promise<void>;
  /** The subscriptions a request was sent to (and whose note has not expired). */
  notified(tenant: string, session: string, requestId: string): Promise<string[]>;
}
