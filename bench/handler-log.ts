/**
 * The handlers log a JSON line per request to stdout, and their metrics as EMF lines
 * (`{"_aws":...`, src/observability/relay-metrics.ts); a bench process keeps those out of its
 * own output, in a file, and prints everything else as usual.
 */
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HandlerLog {
  /** The folder the log is in (the bench also keeps stack data there). */
  dir: string;
  /** The log file. */
  path: string;
  end(): void;
}

/** Diverts the handlers' lines on stdout from now on into `handlers.log` in a fresh folder named by `prefix`. */
export function divertHandlerLogs(prefix: string): HandlerLog {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'handlers.log');
  const file = createWriteStream(path);
  const writeStdout = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.startsWith('{"level":') || text.startsWith('{"_aws":')) return file.write(text);
    return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return { dir, path, end: () => file.end() };
}
