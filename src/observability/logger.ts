/**
 * Structured JSON logs through Powertools for AWS Lambda's Logger: one line per entry, with
 * the service name, the Lambda context of the invocation once a handler hands it over
 * (`injectLambdaContext` middleware or `addContext`), and the correlation fields a caller
 * binds with `child` (request id, connection id, tenant).
 *
 * The relay codes against the small `Logger` interface below, not against Powertools: a
 * child only binds fields, so it is cheap per invocation and shares no mutable state
 * between invocations that run concurrently in one process (the local stack).
 *
 * No token reaches a line: every line is serialised through `redactSecrets`, which masks
 * credential fields and token-shaped text at any depth, error messages and stacks included
 * (AEP-0003 §8.1).
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { LogItem } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import { redactSecrets } from './redact-secrets.ts';

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (the caller's correlation ids). */
  child(fields: LogFields): Logger;
}

/** A function's logger: also hands out the Powertools logger for its Lambda-context middleware. */
export interface FunctionLogger extends Logger {
  readonly powertools: PowertoolsLogger;
}

/**
 * Every level goes to stdout, one compact line each, as before Powertools (which would send
 * warn and error to stderr): Lambda captures both, and the bench keeps handler lines out of
 * its report by diverting stdout lines that start with `{"level":`.
 */
class StdoutLogger extends PowertoolsLogger {
  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    process.stdout.write(`${JSON.stringify(log.getAttributes(), this.getJsonReplacer())}\n`);
  }

  protected override createLogger(options?: ConstructorOptions): PowertoolsLogger {
    return new StdoutLogger(options);
  }
}

export function createLogger(options: { service: string }): FunctionLogger {
  const powertools = new StdoutLogger({ serviceName: options.service, jsonReplacerFn: redactSecrets });
  return { ...bind(powertools, {}), powertools };
}

function bind(powertools: PowertoolsLogger, bound: LogFields): Logger {
  const withBound = (fields: LogFields | undefined): LogFields => (fields === undefined ? bound : { ...bound, ...fields });
  return {
    debug: (message, fields) => powertools.debug(message, withBound(fields)),
    info: (message, fields) => powertools.info(message, withBound(fields)),
    warn: (message, fields) => powertools.warn(message, withBound(fields)),
    error: (message, fields) => powertools.error(message, withBound(fields)),
    child: (fields) => bind(powertools, { ...bound, ...fields }),
  };
}
