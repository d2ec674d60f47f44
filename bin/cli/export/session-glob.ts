/**
 * `aep-relay export --sessions <glob>`: which session names a pattern selects. Pure.
 *
 * The pattern is matched against the whole session name, case-sensitively: `*` matches any run
 * of characters (none included, `/` and `.` too: session names are opaque strings, not paths),
 * `?` exactly one character, `\` makes the next character literal; every other character is
 * itself. No character classes or braces: a name that needs them is selected by two patterns.
 * The literal text before the first wildcard narrows the listing on the relay (`GET /sessions`
 * `prefix`), so `build-*` reads only the index entries of sessions starting with `build-`.
 */

export interface SessionGlob {
  pattern: string;
  /** The characters every matching name starts with. */
  literalPrefix: string;
  matches(session: string): boolean;
}

export function compileSessionGlob(pattern: string): SessionGlob {
  let source = '';
  let literalPrefix = '';
  let wildcardSeen = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index] as string;
    if (character === '*' || character === '?') {
      source += character === '*' ? '[\\s\\S]*' : '[\\s\\S]';
      wildcardSeen = true;
      continue;
    }
    // A trailing backslash escapes nothing: it is a literal backslash.
    const literal = character === '\\' && index + 1 < pattern.length ? (pattern[(index += 1)] as string) : character;
    source += literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    if (!wildcardSeen) literalPrefix += literal;
  }
  const expression = new RegExp(`^${source}$`, 'u');
  return { pattern, literalPrefix, matches: (session) => expression.test(session) };
}

/** The prefix every name that any of the patterns selects starts with (their common literal prefix). */
export function commonPrefix(globs: readonly SessionGlob[]): string {
  if (globs.length === 0) return '';
  let prefix = (globs[0] as SessionGlob).literalPrefix;
  for (const glob of globs.slice(1)) {
    let length = 0;
    while (length < prefix.length && length < glob.literalPrefix.length && prefix[length] === glob.literalPrefix[length]) length += 1;
    prefix = prefix.slice(0, length);
  }
  return prefix;
}
