/**
 * The `person` attribute (`{ subject, name, provider }` as a map) a sign-in credential's token
 * items carry, and a routed command's log item carries as `sentBy`: written beside, never inside,
 * the stored text.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isPerson } from '../auth/oidc/person.ts';
import type { Person } from '../auth/oidc/person.ts';
import { readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';

export function personValue(person: Person): AttributeValue {
  return { M: { subject: str(person.subject), name: str(person.name), provider: str(person.provider) } };
}

/** The item's person under `attribute` (default `person`), when it carries a whole one. */
export function readPerson(item: Item | undefined, attribute = 'person'): Person | undefined {
  const value = item?.[attribute];
  if (value === undefined || !('M' in value) || value.M === undefined) return undefined;
  const candidate = { subject: readString(value.M, 'subject'), name: readString(value.M, 'name'), provider: readString(value.M, 'provider') };
  return isPerson(candidate) ? candidate : undefined;
}
