/** `aep-relay export` arguments: argv to an export request, or a usage error. Pure. */
import { isCaptureLevel } from '../../../src/protocol/levels.ts';
import type { CaptureLevel } from '../../../src/protocol/levels.ts';
import { parseCommandLine, UsageError } from '../cli-arguments.ts';

/** Commands (AEP-0004 §2.2) in the file: kept in their place, or left out so `POST /events` takes the file back. */
export type CommandsInExport = 'include' | 'omit';

export interface ExportRequest {
  /** One session (the single-session export); absent for a tenant-wide export. */
  session?: string;
  /** Tenant-wide: session-name globs (`session-glob.ts`), any of which selects a session; absent: every session. */
  patterns?: string[];
  /** Tenant-wide: the checkpoint file (default `{out}.checkpoint`). */
  resume?: string;
  /** Tenant-wide: stop (exit 3, resumable) once this many events are written. */
  maxEvents?: number;
  commands: CommandsInExport;
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
       aep-relay export [--sessions <glob>]... [--since <time>] [--until <time>] --out <file.jsonl> [--resume <checkpoint>]
       aep-relay export --resume <checkpoint>

Writes stored history as AEP JSONL (one event per line, the text as admitted), oldest first.
One session (--session), or every session of the tenant with activity in the window and/or
whose name matches a --sessions glob (a tenant-wide export): session after session in name
order, each in (epoch, seq) order with seq-less events in their place, which is an order
POST /events takes back (it orders and deduplicates per emitter's session).
  --since, --until   admission time window: RFC 3339 (2026-11-30T00:00:00Z) or epoch milliseconds
  --sessions <glob>  session names, whole and case-sensitive: * any run of characters, ? one,
                     \\ escapes the next; repeat it for several (any matches)
  --capture <level>  down-level to none, metadata or redacted (default: as stored). The token's own
                     maxCapture applies too: below full the lines are down-levelled copies, not the
                     stored texts, and POSTing them back stores those copies, not the originals
  --commands <how>   include (commands in their place) or omit them. Default: include for --session,
                     omit for a tenant-wide export, since POST /events refuses commands (they are
                     accepted only on the WebSocket binding, AEP-0004 §4.1)
  --out <file>       append to <file>; re-run with the same file to resume (without --out, lines go to
                     standard output: aep-relay export --session S > s.jsonl; a tenant-wide export
                     needs --out, to be resumable)
  --resume <file>    tenant-wide: the checkpoint (default <out>.checkpoint). It holds the selection, the
                     sessions chosen at the start, the next page's signed cursor and the bytes of <out>
                     it covers; a rerun cuts <out> back to those bytes and continues from the cursor
  --max-events <n>   tenant-wide: stop after at most n events with exit code 3; rerun to continue
  --page-size <n>    events read per request, at most 1000 (default 1000)
  --url <base>       HTTP mode: the relay's base URL (or AEP_URL), with a consume token:
  --token <token>    (or AEP_TOKEN, which keeps it out of shell history)
  --tenant <id>      direct mode (AEP_EVENTS_TABLE, AEP_CONNECTIONS_TABLE, AEP_TENANTS_TABLE and AWS credentials)

Progress goes to standard error when it is a terminal. Exit codes: 0 done, 1 refused or failed,
2 usage, 3 stopped at --max-events (resumable).`;

export function parseExportArguments(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ExportRequest | 'help' {
  const parsed = parseCommandLine({
    args: [...argv],
    options: {
      session: { type: 'string' },
      sessions: { type: 'string', multiple: true },
      resume: { type: 'string' },
      'max-events': { type: 'string' },
      commands: { type: 'string' },
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
    allowPositionals: false,
  });
  const values = parsed.values;
  if (values.help === true) return 'help';
  const patterns = values.sessions;
  const tenantWide = values.session === undefined && (patterns !== undefined || values.since !== undefined || values.until !== undefined || values.resume !== undefined);
  if (values.session === '' || (values.session === undefined && !tenantWide)) {
    throw new UsageError('export needs --session <id>, or --sessions <glob> and/or --since/--until for a tenant-wide export');
  }
  if (values.session !== undefined && patterns !== undefined) throw new UsageError('give --session <id> or --sessions <glob>, not both');
  if (patterns?.some((pattern) => pattern === '') === true) throw new UsageError('--sessions takes a non-empty glob');
  if (!tenantWide && (values.resume !== undefined || values['max-events'] !== undefined)) throw new UsageError('--resume and --max-events are for a tenant-wide export (--sessions, --since/--until)');
  if (tenantWide && values.out === undefined && values.resume === undefined) throw new UsageError('a tenant-wide export needs --out <file> (it is resumable only from a file)');
  const commands = values.commands ?? (tenantWide ? 'omit' : 'include');
  if (commands !== 'include' && commands !== 'omit') throw new UsageError('--commands is include or omit');
  const maxEvents = values['max-events'] === undefined ? undefined : Number(values['max-events']);
  if (maxEvents !== undefined && (!Number.isSafeInteger(maxEvents) || maxEvents < 1)) throw new UsageError('--max-events is a positive integer');
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
    ...(values.session === undefined ? {} : { session: values.session }),
    ...(patterns === undefined ? {} : { patterns }),
    ...(values.resume === undefined ? {} : { resume: values.resume }),
    ...(maxEvents === undefined ? {} : { maxEvents }),
    commands,
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
