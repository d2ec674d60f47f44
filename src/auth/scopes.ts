/**
 * What a token may do. `emit` posts and streams events, `consume` subscribes and replays,
 * `control` sends commands (AEP-0004 §4.1), `admin` manages the tenant's tokens.
 */
export const SCOPES = ['emit', 'consume', 'control', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Parses a comma-separated scope list, refusing unknown names. */
export function parseScopes(text: string): Scope[] | undefined {
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0 || !names.every(isScope)) return undefined;
  return [...new Set(names)] as Scope[];
}
