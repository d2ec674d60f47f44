/**
 * The person a relay credential was issued to after an OpenID Connect sign-in: who did what is
 * recorded with this beside the token (history, audit), never inside any stored event.
 */
export interface Person {
  /** The ID token's `sub`: stable at the provider, unique per issuer. */
  subject: string;
  /** What to call them (`name`, else `preferred_username`, else `email`, else the subject). */
  name: string;
  /** The provider's display name as the tenant set it (its issuer when unset). */
  provider: string;
}

/** Bounds of a person's fields as stored and carried in the authorizer context. */
const MAX_FIELD = 200;

export function isPerson(value: unknown): value is Person {
  if (typeof value !== 'object' || value === null) return false;
  const { subject, name, provider } = value as Record<string, unknown>;
  return [subject, name, provider].every((field) => typeof field === 'string' && field !== '' && field.length <= MAX_FIELD);
}

/** A field cut to the stored bound (a provider may send a long name). */
export function boundedField(text: string): string {
  return text.length <= MAX_FIELD ? text : text.slice(0, MAX_FIELD);
}
