/**
 * The push subscription use cases behind `/push/…`: register the caller's browser, list and
 * remove subscriptions. A subscription belongs to the principal that registered it (the token's
 * lineage, and the signed-in person where sign-in gives one); a caller sees and removes its
 * own, an `admin` token every subscription of its tenant. Subscribing needs `consume`: a
 * notification is a view of the tenant's events.
 */
import type { Principal } from '../../auth/principal.ts';
import { hasScope, policyIdentityOf } from '../../auth/principal.ts';
import { forbidden, RelayError } from '../../errors/relay-error.ts';
import type { AddressRule } from '../domain/outbound-address.ts';
import type { Clock } from '../ports/clock.ts';
import { parseRegistration } from './push-registration.ts';
import { viewOf } from './push-subscription.ts';
import type { PushOwner, PushSubscriptionRecord, PushSubscriptionView } from './push-subscription.ts';
import type { PushSubscriptionsPort } from './push-subscriptions-port.ts';
import type { PushTransport } from './push-transport-port.ts';

/** Most subscriptions per tenant: the lane reads them all for each batch with attention events. */
export const MAX_PUSH_SUBSCRIPTIONS_PER_TENANT = 200;

export interface PushSubscribersDeps {
  subscriptions: PushSubscriptionsPort;
  transport: Pick<PushTransport, 'vapidKeys'>;
  addresses: AddressRule;
  now: Clock;
}

/**
 * A principal as push sees it. Team sign-in (issue 50) adds the signed-in person to the
 * principal; until then `person` is absent and a subscription is the token's.
 */
export type PushPrincipal = Principal & { person?: PushOwner['person'] };

const pushOff = () => new RelayError('unsupported', 501, 'Web Push is not configured on this relay (no VAPID key)');
const notFound = (id: string) => new RelayError('not-found', 404, `no push subscription ${JSON.stringify(id.slice(0, 64))} of yours`);

export function vapidKeyOf(deps: Pick<PushSubscribersDeps, 'transport'>): string {
  const [current] = deps.transport.vapidKeys();
  if (current === undefined) throw pushOff();
  return current;
}

export async function registerPush(deps: PushSubscribersDeps, principal: PushPrincipal, body: unknown): Promise<PushSubscriptionView> {
  if (!hasScope(principal, 'consume')) throw forbidden('subscribing to notifications needs the consume scope');
  const vapidKeys = deps.transport.vapidKeys();
  if (vapidKeys.length === 0) throw pushOff();
  const parsed = parseRegistration(body, {
    owner: ownerOf(principal),
    ...(principal.maxCapture === undefined ? {} : { tokenCeiling: principal.maxCapture }),
    vapidKeys,
    addresses: deps.addresses,
    nowMs: deps.now(),
  });
  if (!parsed.ok) throw new RelayError('invalid-request', 400, parsed.reason);
  const existing = await deps.subscriptions.list(principal.tenant);
  if (existing.length >= MAX_PUSH_SUBSCRIPTIONS_PER_TENANT && !existing.some((record) => record.id === parsed.record.id)) {
    throw new RelayError('limit-exceeded', 429, `at most ${MAX_PUSH_SUBSCRIPTIONS_PER_TENANT} push subscriptions per tenant; remove some first`);
  }
  await deps.subscriptions.put(principal.tenant, parsed.record);
  return viewOf(parsed.record);
}

export async function listPush(deps: Pick<PushSubscribersDeps, 'subscriptions'>, principal: PushPrincipal): Promise<PushSubscriptionView[]> {
  const all = await deps.subscriptions.list(principal.tenant);
  return all.filter((record) => mayManage(principal, record)).map(viewOf);
}

export async function removePush(deps: Pick<PushSubscribersDeps, 'subscriptions'>, principal: PushPrincipal, id: string): Promise<void> {
  const record = await deps.subscriptions.get(principal.tenant, id);
  // Another principal's subscription is not found, never forbidden: its existence is not told.
  if (record === undefined || !mayManage(principal, record)) throw notFound(id);
  await deps.subscriptions.remove(principal.tenant, id);
}

function ownerOf(principal: PushPrincipal): PushOwner {
  return { token: policyIdentityOf(principal), ...(principal.person === undefined ? {} : { person: principal.person }) };
}

function mayManage(principal: PushPrincipal, record: PushSubscriptionRecord): boolean {
  if (hasScope(principal, 'admin')) return true;
  if (principal.person !== undefined && record.owner.person !== undefined) return principal.person.subject === record.owner.person.subject && principal.person.provider === record.owner.person.provider;
  return record.owner.token === policyIdentityOf(principal);
}
