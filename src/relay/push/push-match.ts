/**
 * Which subscriptions an attention request goes to: the subscription's filter (AEP-0003 §6,
 * envelope attributes only) and, since routing never parses payloads there, its request kinds
 * checked here on `data.kind` (AEP-0002 §5.3). Follow-ups are not matched: they go to whoever
 * was sent the request (`PushSubscriptionsPort.notified`), whatever their filter says of them.
 */
import { compileFilter } from '../../protocol/attr-match.ts';
import type { EventMatcher } from '../../protocol/attr-match.ts';
import { isJsonObject } from '../../protocol/event.ts';
import type { AepEvent } from '../../protocol/event.ts';
import type { PushSubscriptionRecord } from './push-subscription.ts';

export type RequestMatcher = (event: AepEvent) => boolean;

export function requestMatcher(record: PushSubscriptionRecord): RequestMatcher {
  const envelope: EventMatcher = compileFilter(record.filter);
  const kinds = record.kinds === undefined ? undefined : new Set<string>(record.kinds);
  return (event) => {
    if (!envelope(event)) return false;
    if (kinds === undefined) return true;
    const kind = isJsonObject(event.data) ? event.data.kind : undefined;
    return typeof kind === 'string' && kinds.has(kind);
  };
}
