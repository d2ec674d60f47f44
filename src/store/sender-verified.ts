/**
 * The `senderVerified` attribute of a stored command (`StoredAnnotations`): a map
 * `{ operator: S }` written beside `raw`, read back by history.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { SenderVerified } from '../relay/domain/stored-event.ts';
import { readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';

export const SENDER_VERIFIED = 'senderVerified';

export function senderVerifiedValue(standing: SenderVerified): AttributeValue {
  return { M: { operator: str(standing.operator) } };
}

/** The item's `senderVerified`, when it carries one. */
export function readSenderVerified(item: Item | undefined): SenderVerified | undefined {
  const value = item?.[SENDER_VERIFIED];
  const operator = value !== undefined && 'M' in value ? readString(value.M, 'operator') : undefined;
  return operator === undefined ? undefined : { operator };
}
