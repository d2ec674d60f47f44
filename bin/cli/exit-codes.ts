import { RelayError } from '../../src/errors/relay-error.ts';
import { UsageError } from './usage-error.ts';

/**
 * The exit codes every `aep-relay` command shares, so a script can tell "done" from "there was
 * nothing to do" and from "no such thing" without reading the words (`--help` lists them).
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** Refused by the relay (its error code is printed), unreachable, or failed. */
  failed: 1,
  /** The command line is wrong (usage printed). */
  usage: 2,
  /** Nothing to do: the thing is already so (a token already revoked, a tenant already disabled or existing, an attention request already resolved). */
  nothingToDo: 3,
  /** The token, tenant or attention request named does not exist (here). */
  notFound: 4,
} as const;

/** The lines `--help` ends with. */
export const EXIT_CODES_HELP = `Exit codes:
  0  done
  1  refused by the relay (its error code is printed), unreachable, or failed
  2  usage
  3  nothing to do: already so (token already revoked, tenant already disabled, enabled or existing,
     attention request already resolved)
  4  not found: no such token, tenant or attention request`;

/** The exit code of a relay refusal, by its error code: the two that mean "already so" and "no such thing" have their own. */
export function exitCodeOfRefusal(code: string): number {
  if (code === 'not-found') return EXIT.notFound;
  if (code === 'tenant-exists') return EXIT.nothingToDo;
  return EXIT.failed;
}

/**
 * What every command prints and exits with when it fails: a usage error with where its help is,
 * a relay refusal with its code and detail (`refusedWhat` names what was refused, if the
 * command words it), anything else with its message.
 */
export function exitOnFailure(error: unknown, err: (line: string) => void, options: { helpCommand: string; refusedWhat?: string }): number {
  if (error instanceof UsageError) {
    err(`error: ${error.message}`);
    err(`run ${options.helpCommand} --help for usage`);
    return EXIT.usage;
  }
  if (error instanceof RelayError) {
    err(`error: ${options.refusedWhat === undefined ? '' : `the relay refused ${options.refusedWhat}: `}${error.code}${error.detail === undefined ? '' : `: ${error.detail}`}`);
    return exitCodeOfRefusal(error.code);
  }
  err(`error: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT.failed;
}
