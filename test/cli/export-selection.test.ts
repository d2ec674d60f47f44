import { describe, expect, it } from 'vitest';
import { parseExportArguments } from '../../bin/cli/export/export-arguments.ts';
import { UsageError } from '../../bin/cli/cli-arguments.ts';
import { commonPrefix, compileSessionGlob } from '../../bin/cli/export/session-glob.ts';

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
