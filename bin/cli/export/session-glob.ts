/**
 * `aep-relay export --sessions <glob>`: which session names a pattern selects. Pure.
 *
 * The pattern is matched against the whole session name, case-sensitively: `*` matches any run
 * of characters (none included, `/` and `.` too: session names are opaque strings, not paths),
 * `?` exactly one character (code point), `\` makes the next character literal; every other
 * character is itself. No character classes or braces: a name that needs them is selected by
 * two patterns. The literal text before the first wildcard narrows the listing on the relay
 * (`GET /sessions` `prefix`), so `build-*` reads only the index entries of sessions starting
 * with `build-`.
 *
 * Session names are chosen by any emitter, so matching must not backtrack: a regular expression
 * compiled from `*-*-*-*x` took over a second on 200 `-`, nine stars half a minute on 40
 * characters. The pattern is cut at its stars into fixed-length segments; the first must match
 * at the start, the last at the end, and each one between is taken at its earliest place after
 * the previous one. Earliest is always right (a later place leaves the rest less room), so no
 * segment is ever searched twice: for a given pattern the work grows linearly with the name.
 */

/** One `*`-free run of the pattern: each unit a literal character, or `ANY_ONE` for `?`. */
type Segment = ReadonlyArray<string | typeof ANY_ONE>;
const ANY_ONE = Symbol('?');

export interface SessionGlob {
  pattern: string;
  /** The characters every matching name starts with. */
  literalPrefix: string;
  /** The pattern cut at its stars: one more segment than it has stars. */
  segments: readonly Segment[];
  matches(session: string): boolean;
}

export function compileSessionGlob(pattern: string): SessionGlob {
  const characters = Array.from(pattern);
  const segments: Array<Array<string | typeof ANY_ONE>> = [[]];
  let literalPrefix = '';
  let wildcardSeen = false;
  for (let index = 0; index < characters.length; index += 1) {
    const character = characters[index] as string;
    const segment = segments[segments.length - 1] as Array<string | typeof ANY_ONE>;
    if (character === '*' || character === '?') {
      if (character === '*') segments.push([]);
      else segment.push(ANY_ONE);
      wildcardSeen = true;
      continue;
    }
    // A trailing backslash escapes nothing: it is a literal backslash.
    const literal = character === '\\' && index + 1 < characters.length ? (characters[(index += 1)] as string) : character;
    segment.push(literal);
    if (!wildcardSeen) literalPrefix += literal;
  }
  const glob: SessionGlob = { pattern, literalPrefix, segments, matches: (session) => matchSessionGlob(glob, session).matched };
  return glob;
}

/** Whether `session` matches, and how many characters were compared to find out (what bounds the work). */
export function matchSessionGlob(glob: SessionGlob, session: string): { matched: boolean; comparisons: number } {
  const text = Array.from(session);
  let comparisons = 0;
  const fitsAt = (segment: Segment, at: number): boolean => {
    for (let offset = 0; offset < segment.length; offset += 1) {
      comparisons += 1;
      const unit = segment[offset];
      if (unit !== ANY_ONE && unit !== text[at + offset]) return false;
    }
    return true;
  };
  const verdict = (matched: boolean) => ({ matched, comparisons });
  const { segments } = glob;
  const first = segments[0] as Segment;
  if (segments.length === 1) return verdict(text.length === first.length && fitsAt(first, 0));
  const last = segments[segments.length - 1] as Segment;
  const end = text.length - last.length;
  if (end < first.length || !fitsAt(first, 0) || !fitsAt(last, end)) return verdict(false);
  let from = first.length;
  for (const segment of segments.slice(1, -1)) {
    let at = from;
    while (at + segment.length <= end && !fitsAt(segment, at)) at += 1;
    if (at + segment.length > end) return verdict(false);
    from = at + segment.length;
  }
  return verdict(true);
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
