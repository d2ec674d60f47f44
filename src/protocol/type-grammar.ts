/**
 * The grammar of an event `type` (AEP-0001 §6, AEP-0002 §3) and the scope each type implies
 * (AEP-0001 §5.2). Pure string work: everything here accepts any input and never throws.
 */

/** The closed category set of AEP 0.1 (AEP-0002 §3); `x` is the vendor prefix, not a category. */
export const CATEGORIES = [
  'agent', 'session', 'run', 'progress', 'tool', 'delegation', 'attention',
  'resource', 'error', 'state', 'assessment', 'message', 'control',
] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * How the envelope's session attributes apply to a type (AEP-0001 §5.2):
 * - `agent`: describes the emitter itself; omits session, run, step and seq;
 * - `command`: an inbound control command (AEP-0004 §2.2); carries session, omits seq;
 * - `foreign`: `attention.routed`, emitted by a consumer (AEP-0002 §7.3); carries session, omits seq;
 * - `session`: everything else; carries session and seq.
 */
export type TypeScope = 'agent' | 'command' | 'foreign' | 'session';

/** A well-formed type, split into its parts. */
export interface ParsedType {
  type: string;
  /** The vendor token of an `x.{vendor}.…` extension type; absent for core types. */
  vendor?: string;
  /** The category token: one of {@link CATEGORIES} for core types, any token for vendor types. */
  category: string;
  /** The tokens after the category (at least one). */
  rest: string[];
  scope: TypeScope;
}

/** The result of {@link parseType}: the parts, or the rule the string breaks. */
export type TypeParse =
  | { ok: true; parsed: ParsedType }
  | { ok: false; rule: 'AEP-0001 §6' | 'AEP-0002 §3'; message: string };

const categorySet: ReadonlySet<string> = new Set(CATEGORIES);
const TOKEN = /^[a-z0-9_]+$/;
// Only the vendor token may carry '-' (AEP-0001 §6), e.g. `x.claude-code.session.config_change`.
const VENDOR_TOKEN = /^[a-z0-9_-]+$/;

// The scope tests mirror the envelope schema's conditionals verbatim: agent scope is a plain
// `agent.` prefix (so `x.acme.agent.ping` is session-scoped), and the foreign-emitter commands
// are the four registered verbs plus any vendor `control` type (AEP-0004 §2.2).
const AGENT_SCOPED = /^agent\./;
const COMMAND = /^(?:control\.attention\.respond|control\.cancel|control\.pause|control\.resume|x\.[a-z0-9_-]+\.control\..+)$/;
const ROUTED = 'attention.routed';

/** Whether `name` is one of the thirteen registered categories (AEP-0002 §3). */
export function isCategory(name: unknown): name is Category {
  return typeof name === 'string' && categorySet.has(name);
}

/** Parses a `type` string, naming the rule it breaks when it is not well-formed. */
export function parseType(type: unknown): TypeParse {
  if (typeof type !== 'string') {
    return { ok: false, rule: 'AEP-0001 §6', message: 'type must be a string' };
  }
  const tokens = type.split('.');
  const [first, second] = tokens;
  if (first === 'x') {
    // x.{vendor}.{category}.{rest}: the vendor token, then a category and at least one more token.
    if (tokens.length < 4 || second === undefined || !VENDOR_TOKEN.test(second)) {
      return {
        ok: false,
        rule: 'AEP-0001 §6',
        message: `vendor type "${clip(type)}" must have the form x.{vendor}.{category}.{rest}`,
      };
    }
    const tail = tokens.slice(2);
    if (!tail.every((token) => TOKEN.test(token))) {
      return {
        ok: false,
        rule: 'AEP-0001 §6',
        message: `vendor type "${clip(type)}" must use lowercase [a-z0-9_] tokens after the vendor`,
      };
    }
    const [category, ...rest] = tail as [string, ...string[]];
    return { ok: true, parsed: { type, vendor: second, category, rest, scope: typeScope(type) } };
  }
  if (tokens.length < 2 || !tokens.every((token) => TOKEN.test(token))) {
    return {
      ok: false,
      rule: 'AEP-0001 §6',
      message: `type "${clip(type)}" must be lowercase {category}.{rest} with [a-z0-9_] tokens`,
    };
  }
  const [category, ...rest] = tokens as [string, ...string[]];
  if (!categorySet.has(category)) {
    return {
      ok: false,
      rule: 'AEP-0002 §3',
      message: `"${clip(category)}" is not a registered category; vendor types use x.{vendor}.${clip(category)}.…`,
    };
  }
  return { ok: true, parsed: { type, category, rest, scope: typeScope(type) } };
}

/** Whether `type` is a well-formed core or vendor type. */
export function isWellFormedType(type: unknown): type is string {
  return parseType(type).ok;
}

/** The category token of a well-formed type (for vendor types, the token after the vendor). */
export function typeCategory(type: unknown): string | undefined {
  const result = parseType(type);
  return result.ok ? result.parsed.category : undefined;
}

/**
 * The session scope a type implies (AEP-0001 §5.2). Works on any string, well-formed or not,
 * exactly as the envelope schema's conditionals do.
 */
export function typeScope(type: unknown): TypeScope {
  if (typeof type !== 'string') return 'session';
  if (AGENT_SCOPED.test(type)) return 'agent';
  if (COMMAND.test(type)) return 'command';
  if (type === ROUTED) return 'foreign';
  return 'session';
}

/** Agent-scoped types omit session, run, step and seq (AEP-0001 §5.2). */
export function isAgentScopedType(type: unknown): boolean {
  return typeScope(type) === 'agent';
}

/** Control commands, which the relay routes to the session's owner (AEP-0004 §2.2, §4.5). */
export function isCommandType(type: unknown): boolean {
  return typeScope(type) === 'command';
}

/** Foreign-emitter session types (commands and `attention.routed`): session present, seq omitted. */
export function isForeignEmitterType(type: unknown): boolean {
  const scope = typeScope(type);
  return scope === 'command' || scope === 'foreign';
}

/** A WebSocket frame's `type` has no dot; an event's always has one (AEP-0003 §2). */
export function isFrameType(type: unknown): type is string {
  return typeof type === 'string' && type !== '' && !type.includes('.');
}

// Messages echo the offending value; keep them short so a hostile megabyte string stays out.
function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
