/**
 * Structured JSON logs, one line per entry. Fields are chosen by the caller; this file never
 * adds request URLs, headers or bodies, so a token cannot reach a log line through it
 * (AEP-0003 §8.1: the `access_token` query value MUST NOT be logged).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export type LogSink = (line: string) => void;

export function createLogger(options: { service: string; level?: LogLevel; sink?: LogSink; fields?: Record<string, unknown> }): Logger {
  const minimum = LEVEL_RANK[options.level ?? 'info'];
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = { service: options.service, ...options.fields };
  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVEL_RANK[level] < minimum) return;
    sink(JSON.stringify({ level, time: new Date().toISOString(), message, ...base, ...fields }, errorReplacer));
  };
  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...options.fields, ...fields } }),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && value in LEVEL_RANK;
}
