import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseExportArguments } from '../../bin/cli/export/export-arguments.ts';
import { UsageError } from '../../bin/cli/cli-arguments.ts';
import { commonPrefix, compileSessionGlob, matchSessionGlob } from '../../bin/cli/export/session-glob.ts';

/** The glob as a regular expression, the reference the matcher is checked against (on inputs too small to backtrack far). */
function referenceExpression(pattern: string): RegExp {
  let source = '';
  const characters = Array.from(pattern);
  for (let index = 0; index < characters.length; index += 1) {
    const character = characters[index] as string;
    if (character === '*' || character === '?') source += character === '*' ? '[\\s\\S]*' : '[\\s\\S]';
    else source += (character === '\\' && index + 1 < characters.length ? (characters[(index += 1)] as string) : character).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u');
}

describe('--sessions globs', () => {
  it('match the whole name: * any run (slashes and dots too), ? one character, \\ a literal', () => {
    const build = compileSessionGlob('build-*');
    expect(['build-', 'build-1', 'build-a/b.c'].map(build.matches)).toEqual([true, true, true]);
    expect(['Build-1', 'xbuild-1', 'build'].map(build.matches)).toEqual([false, false, false]);
    const one = compileSessionGlob('run-?');
    expect(['run-1', 'run-é', 'run-', 'run-12'].map(one.matches)).toEqual([true, true, false, false]);
    const literal = compileSessionGlob('a\\*b.c(d)');
    expect(literal.matches('a*b.c(d)')).toBe(true);
    expect(literal.matches('axb.c(d)')).toBe(false);
    expect(literal.matches('a*bxc(d)')).toBe(false);
  });

  it('narrow the listing by the literal text before the first wildcard, common to every pattern', () => {
    expect(compileSessionGlob('build-*-x').literalPrefix).toBe('build-');
    expect(compileSessionGlob('a\\*b*').literalPrefix).toBe('a*b');
    expect(compileSessionGlob('*').literalPrefix).toBe('');
    expect(commonPrefix(['build-a*', 'build-b*'].map(compileSessionGlob))).toBe('build-');
    expect(commonPrefix(['build-*', 'deploy-*'].map(compileSessionGlob))).toBe('');
  });

  it.each([
    ['', '', true],
    ['', 'a', false],
    ['*', '', true],
    ['**', 'abc', true],
    ['?', '', false],
    ['?', '😀', true],
    ['a*', 'a', true],
    ['*a', 'ba', true],
    ['*a', 'ab', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['ab*ba', 'aba', false],
    ['ab*ba', 'abba', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['*ab*abc', 'ababc', true],
    ['*aab*', 'aaab', true],
    ['?*?', 'a', false],
    ['?*?', 'ab', true],
    ['*?x?*', 'abxcd', true],
    ['*?x?*', 'xab', false],
    ['x\\', 'x\\', true],
    ['\\?', '?', true],
    ['\\?', 'a', false],
  ])('matches %j against %j: %s', (pattern, session, expected) => {
    expect(compileSessionGlob(pattern).matches(session)).toBe(expected);
  });

  it('agrees with the regular expression it replaces on random patterns and names', () => {
    const alphabet = fc.constantFrom('a', 'b', '-', '*', '?', '\\', '😀');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 8 }), fc.array(fc.constantFrom('a', 'b', '-', '*', '?', '\\', '😀'), { maxLength: 12 }), (patternCharacters, nameCharacters) => {
        const pattern = patternCharacters.join('');
        const name = nameCharacters.join('');
        expect(compileSessionGlob(pattern).matches(name)).toBe(referenceExpression(pattern).test(name));
      }),
      { numRuns: 2000 },
    );
  });

  it('does work linear in the name on the patterns that made the backtracking expression take seconds', () => {
    // The inputs: `*-*-*-*x` against 200 `-` (1.1 s), nine stars against 40 characters (31.5 s).
    const cases: Array<[string, (length: number) => string]> = [
      ['*-*-*-*x', (length) => '-'.repeat(length)],
      ['*-*-*-*x*', (length) => '-'.repeat(length)],
      ['*a*a*a*a*a*a*a*a*a', (length) => `${'a'.repeat(length - 1)}b`],
      ['*a*a*a*a*a*a*a*a*ab*', (length) => 'a'.repeat(length)],
      ['a*a*a*a*a*a*a*a*a*b', (length) => 'a'.repeat(length)],
    ];
    for (const [pattern, nameOf] of cases) {
      const glob = compileSessionGlob(pattern);
      for (const length of [40, 200, 2000, 20_000]) {
        const outcome = matchSessionGlob(glob, nameOf(length));
        expect(outcome.matched).toBe(false);
        // At most two comparisons per character of the name and of the pattern, whatever the length.
        expect(outcome.comparisons, `${pattern} on ${length}`).toBeLessThanOrEqual(2 * (length + pattern.length));
      }
    }
  });
});

describe('export arguments', () => {
  const http = ['--url', 'http://relay.test', '--token', 'aep_x'];

  it('a tenant-wide export: globs and/or a window, to a file, commands left out by default', () => {
    expect(parseExportArguments(['--sessions', 'build-*', '--sessions', 'ci-*', '--since', '2026-01-01T00:00:00Z', '--out', 'w.jsonl', ...http], {})).toMatchObject({
      patterns: ['build-*', 'ci-*'],
      since: '2026-01-01T00:00:00Z',
      out: 'w.jsonl',
      commands: 'omit',
    });
    expect(parseExportArguments(['--resume', 'w.ckpt', '--max-events', '50', ...http], {})).toMatchObject({ resume: 'w.ckpt', maxEvents: 50, commands: 'omit' });
    expect(parseExportArguments(['--session', 's', ...http], {})).toMatchObject({ session: 's', commands: 'include' });
  });

  it('refuses what cannot be combined, naming it', () => {
    const refusal = (argv: string[]) => {
      try {
        parseExportArguments(argv, {});
      } catch (error) {
        return error instanceof UsageError ? error.message : String(error);
      }
      return 'accepted';
    };
    expect(refusal(http)).toBe('export needs --session <id>, or --sessions <glob> and/or --since/--until for a tenant-wide export');
    expect(refusal(['--sessions', 'b-*', ...http])).toBe('a tenant-wide export needs --out <file> (it is resumable only from a file)');
    expect(refusal(['--session', 's', '--sessions', 'b-*', ...http])).toBe('give --session <id> or --sessions <glob>, not both');
    expect(refusal(['--session', 's', '--max-events', '5', ...http])).toBe('--resume and --max-events are for a tenant-wide export (--sessions, --since/--until)');
    expect(refusal(['--sessions', 'b-*', '--out', 'f', '--max-events', '0', ...http])).toBe('--max-events is a positive integer');
    expect(refusal(['--sessions', 'b-*', '--out', 'f', '--commands', 'some', ...http])).toBe('--commands is include or omit');
  });
});
