/** `aep-relay export` arguments: argv to an export request, or a usage error. Pure. */
import { parseArgs } from 'node:util';
import { isCaptureLevel } from '../../../src/protocol/levels.ts';
import type { CaptureLevel } from '../../../src/protocol/levels.ts';
import { UsageError } from '../cli-arguments.ts';

export interface ExportRequest {
  session: string;
  /** RFC 3339 or epoch ms, passed to `GET /history` as is (the relay validates it). */
  since?: string;
  until?: string;
  capture?: CaptureLevel;
  /** Appends to this file, resuming after its last complete line; stdout when absent. */
  out?: string;
  /** Events read per page. */
  pageSize: number;
  url?: string;
  token?: string;
  /** Direct mode: the tenant whose history is read. */
  tenant?: string;
}

export const EXPORT_USAGE = `Usage: aep-relay export --session <id> [--since <time>] [--until <time>] [--capture <level>] [--out <file.jsonl>]

Writes a session's stored history as AEP JSONL (one event per line, as admitted), oldest first.
  --since, --until   admission time window: RFC 3339 (2026-11-30T00:00:00Z) or epoch milliseconds
  --capture <level>  down-level to none, metadata or redacted (default: as stored)
  --out <file>       append to <file>; re-run with the same file to resume after its last complete line
                     (without --out, lines go to standard output: aep-relay export --session S > s.jsonl)
  --page-size <n>    events per request, at most 1000 (default 1000)
  --url <base>       HTTP mode: the relay's base URL (or AEP_URL), with a consume token:
  --token <token>    (or AEP_TOKEN, which keeps it out of shell history)
  --tenant <id>      direct mode (AEP_EVENTS_TABLE, AEP_CONNECTIONS_TABLE, AEP_TENANTS_TABLE and AWS credentials)

Progress goes to standard error when it is a terminal. Exit codes: 0 done, 1 refused or failed, 2 usage.`;

export function parseExportArguments(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ExportRequest | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        session: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        capture: { type: 'string' },
        out: { type: 'string' },
        'page-size': { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
        tenant: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values = parsed.values;
  if (values.help === true) return 'help';
  if (values.session === undefined || values.session === '') throw new UsageError('export needs --session <id>');
  if (values.capture !== undefined && !isCaptureLevel(values.capture)) throw new UsageError('--capture is one of none, metadata, redacted, full');
  const pageSize = values['page-size'] === undefined ? 1000 : Number(values['page-size']);
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new UsageError('--page-size is an integer from 1 to 1000');
  const url = values.url ?? nonEmpty(env.AEP_URL);
  const token = values.token ?? nonEmpty(env.AEP_TOKEN);
  if (url !== undefined && token === undefined) throw new UsageError('HTTP mode needs a consume token: --token or AEP_TOKEN');
  if (url === undefined && values.token !== undefined) throw new UsageError('--token is for HTTP mode; give --url (or AEP_URL) too');
  if (url === undefined && values.tenant === undefined) throw new UsageError('direct mode needs --tenant <id> (or give --url and a token for HTTP mode)');
  if (url !== undefined && values.tenant !== undefined) throw new UsageError('--tenant is for direct mode; in HTTP mode the token names the tenant');
  return {
    session: values.session,
    pageSize,
    ...(values.since === undefined ? {} : { since: values.since }),
    ...(values.until === undefined ? {} : { until: values.until }),
    ...(values.capture === undefined ? {} : { capture: values.capture as CaptureLevel }),
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(url === undefined ? {} : { url }),
    ...(token === undefined ? {} : { token }),
    ...(values.tenant === undefined ? {} : { tenant: values.tenant }),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
