/**
 * The command line of one of the project's npm scripts (`npm start`, `npm run agent`, `npm run
 * card`, ...): node:util `parseArgs`, strict, so a misspelt flag is refused instead of ignored.
 * `--help` (or `-h`) prints the script's usage and exits 0 before the script does anything; a
 * command line `parseArgs` refuses, or one the script's own `check` refuses, prints the reason
 * and where the usage is, and exits 2 (the exit code every `aep-relay` command uses for usage).
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { parseCommandLine, UsageError } from './cli-arguments.ts';
import { EXIT } from './exit-codes.ts';

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T & { strict: true }>>;

export interface ScriptCommandLine<T extends ParseArgsConfig> {
  /** How a person runs it, e.g. `npm run agent --`: named in the refusal's pointer to `--help`. */
  command: string;
  usage: string;
  /** The script's options (`help` is added); `args` defaults to this process's arguments. */
  config: T;
  /** Further rules on the parsed line: throw a UsageError to refuse it. */
  check?: (parsed: Parsed<T>) => void;
}

export function scriptArguments<T extends ParseArgsConfig>(line: ScriptCommandLine<T>): Parsed<T> {
  const { command, usage, config, check } = line;
  try {
    const parsed = parseCommandLine({ args: process.argv.slice(2), ...config, options: { ...config.options, help: { type: 'boolean', short: 'h' } } });
    if ((parsed.values as { help?: boolean }).help === true) {
      process.stdout.write(`${usage}\n`);
      process.exit(EXIT.ok);
    }
    check?.(parsed as Parsed<T>);
    return parsed as Parsed<T>;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\nrun ${command} --help for usage\n`);
    process.exit(EXIT.usage);
  }
}
