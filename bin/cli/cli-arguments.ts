/**
 * The `aep-relay` command line: argv to a command, or a usage error (exit code 2). Pure, so
 * every rule about what may be combined is in one place.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { parseScopes } from '../../src/auth/scopes.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { CAPTURE_LEVELS, isCaptureLevel } from '../../src/protocol/levels.ts';
import type { CaptureLevel } from '../../src/protocol/levels.ts';
import { EXIT_CODES_HELP } from './exit-codes.ts';
import { UsageError } from './usage-error.ts';

export type Command =
  /** The usage, of one command group when `group` names one. */
  | { kind: 'help'; group?: string }
  | { kind: 'tenants create' | 'tenants disable' | 'tenants enable'; tenant: string }
  | { kind: 'tenants list' }
  | { kind: 'tokens issue'; tenant?: string; scopes: Scope[]; agents?: string[]; operator?: string; expiresInSeconds?: number; maxCapture?: CaptureLevel; label?: string }
  | { kind: 'tokens list' | 'policy show' | 'quotas show'; tenant?: string }
  /** Each named quota set to a number, or (null) removed so the deployment's limit applies. */
  | { kind: 'quotas set'; tenant?: string; changes: Record<string, number | null> }
  | { kind: 'tokens revoke' | 'tokens rotate'; tenant?: string; tokenId: string }
  | { kind: 'policy set' | 'bridges set'; tenant?: string; source: string }
  | { kind: 'bridges list' | 'bridges clear' | 'bridges dead-letters' | 'bridges redrive'; tenant?: string }
  | { kind: 'operators list'; tenant?: string }
  | { kind: 'operators add'; tenant?: string; name: string; jwks?: string; jwksUrl?: string }
  | { kind: 'operators remove'; tenant?: string; name: string }
  | { kind: 'push list' }
  | { kind: 'push delete'; id: string };

export interface Invocation {
  command: Command;
  json: boolean;
  url?: string;
  token?: string;
}

export { UsageError } from './usage-error.ts';

/** `parseArgs`, strict, with what it refuses (an unknown or malformed option) as a UsageError. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T & { strict: true }>> {
  try {
    return parseArgs({ ...config, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Each command group's part of the usage, so `aep-relay <group> --help` prints its own. */
const GROUP_USAGE = {
  tenants: `Tenants (operator):
  tenants create <id>
  tenants list
  tenants disable <id>
  tenants enable <id>`,
  tokens: `Tokens:
  tokens issue --tenant <id> --scopes emit,consume,control,admin [--agents a,b] [--expires-in <seconds>]
               [--max-capture none|metadata|redacted|full] [--label <text>] [--operator <name>]
  tokens list --tenant <id>
  tokens revoke --tenant <id> <tokenId>
  tokens rotate --tenant <id> <tokenId>`,
  policy: `Control policy:
  policy show --tenant <id>
  policy set --tenant <id> <file.json | ->`,
  quotas: `Quotas (set by the operator's tenant-wide admin token, or AWS credentials in direct mode):
  quotas show --tenant <id>
  quotas set --tenant <id> <name>=<n|default> ...   maxConnections, eventsPerSecond,
                 maxSubscriptionsPerConnection, maxBatchEvents, retentionDays; default removes one`,
  bridges: `Bridges (AEP-0005 sinks; HTTP mode only, the relay seals their secrets):
  bridges set --tenant <id> <sinks.json | ->     replaces the tenant's sinks: { "sinks": [ ... ] }
  bridges list --tenant <id>
  bridges clear --tenant <id>
  bridges dead-letters --tenant <id>
  bridges redrive --tenant <id>`,
  operators: `Trusted operators (identity cards, AEP-0003 §8.3; HTTP mode only, a tenant-wide admin token changes them):
  operators list --tenant <id>
  operators add --tenant <id> <name> (--jwks <public-jwks.json | -> | --jwks-url <https URL>)
  operators remove --tenant <id> <name>`,
  push: `Web Push subscriptions (HTTP mode; the token's own, an admin token's: its whole tenant's; docs/web-push.md):
  push list
  push delete <subscriptionId>`,
} as const;

type CommandGroup = keyof typeof GROUP_USAGE;
const isCommandGroup = (name: string | undefined): name is CommandGroup => name !== undefined && Object.hasOwn(GROUP_USAGE, name);

const OPTIONS_AND_MODES = `Options:
  --json             machine-readable output
  --url <base>       HTTP mode: the relay's base URL (or AEP_URL)
  --token <token>    HTTP mode: an admin token (or AEP_ADMIN_TOKEN, which keeps it out of shell history)
  -h, --help

Modes:
  HTTP    with --url/AEP_URL and an admin token: calls the relay's /admin routes. --tenant may be
          left out to act on the token's own tenant; other tenants need the operator's token.
  direct  with AEP_TENANTS_TABLE (and AWS credentials, AWS_REGION): works on DynamoDB itself;
          AEP_DYNAMODB_ENDPOINT for DynamoDB Local. Revocation closes open WebSocket connections
          only when AEP_EVENTS_TABLE, AEP_CONNECTIONS_TABLE and AEP_WS_MANAGEMENT_ENDPOINT are set.`;

export const USAGE = `Usage: aep-relay <command> [options]   (aep-relay <group> --help: one group's commands)

${Object.values(GROUP_USAGE).join('\n')}
History:
  export --session <id> [--out <file.jsonl>]   (aep-relay export --help for its options)
  export [--sessions <glob>] [--since <t>] [--until <t>] --out <file.jsonl>   (every chosen session; resumable)
Team sign-in (your identity provider; aep-relay login --help):
  login --url <base> --tenant <id>              device sign-in; commands then use it when AEP_TOKEN is unset
  logout                                        revokes and removes the stored credential
Attention (a consume and control token in AEP_TOKEN; aep-relay attention --help):
  attention list --session <id>                  the session's open attention requests
  attention answer --session <id> <requestId> <option> | --text <text> | --values <json>

${OPTIONS_AND_MODES}

Secrets: give tokens through the environment (AEP_ADMIN_TOKEN; AEP_TOKEN for export and attention),
not --token: a command line is kept in shell history, shown by ps, and echoed by npm run.

${EXIT_CODES_HELP}`;

/** The usage of one command group (`aep-relay tokens --help`), or the whole usage. */
export function usageOf(group?: string): string {
  if (!isCommandGroup(group)) return USAGE;
  return `Usage: aep-relay ${group} <command> [options]

${GROUP_USAGE[group]}

${OPTIONS_AND_MODES}

${EXIT_CODES_HELP}`;
}

const OPTIONS = {
  json: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  tenant: { type: 'string' },
  scopes: { type: 'string' },
  agents: { type: 'string' },
  'expires-in': { type: 'string' },
  label: { type: 'string' },
  'max-capture': { type: 'string' },
  operator: { type: 'string' },
  jwks: { type: 'string' },
  'jwks-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Options each command takes besides the global ones (`json`, `url`, `token`, `help`). */
const COMMAND_OPTIONS: Record<string, readonly string[]> = {
  'tenants create': [],
  'tenants list': [],
  'tenants disable': [],
  'tenants enable': [],
  'tokens issue': ['tenant', 'scopes', 'agents', 'expires-in', 'max-capture', 'label', 'operator'],
  'tokens list': ['tenant'],
  'tokens revoke': ['tenant'],
  'tokens rotate': ['tenant'],
  'policy show': ['tenant'],
  'policy set': ['tenant'],
  'quotas show': ['tenant'],
  'quotas set': ['tenant'],
  'bridges set': ['tenant'],
  'bridges list': ['tenant'],
  'bridges clear': ['tenant'],
  'bridges dead-letters': ['tenant'],
  'bridges redrive': ['tenant'],
  'operators list': ['tenant'],
  'operators add': ['tenant', 'jwks', 'jwks-url'],
  'operators remove': ['tenant'],
  'push list': [],
  'push delete': [],
};

export function parseInvocation(argv: readonly string[]): Invocation {
  const { values, positionals } = parseCommandLine({ args: [...argv], options: OPTIONS, allowPositionals: true });
  const global = {
    json: values.json === true,
    ...(values.url === undefined ? {} : { url: values.url }),
    ...(values.token === undefined ? {} : { token: values.token }),
  };
  if (positionals.length === 0) return { command: { kind: 'help' }, ...global };
  if (values.help === true) {
    // `aep-relay tokens --help` (or `tokens issue --help`): that group's commands.
    const group = positionals[0];
    if (!isCommandGroup(group)) throw new UsageError(`unknown command: ${group ?? ''}`);
    return { command: { kind: 'help', group }, ...global };
  }
  const [group, verb, ...operands] = positionals;
  const kind = `${group} ${verb ?? ''}`;
  const allowed = COMMAND_OPTIONS[kind];
  if (allowed === undefined) throw new UsageError(`unknown command: ${positionals.slice(0, 2).join(' ')}`);
  for (const name of ['tenant', 'scopes', 'agents', 'expires-in', 'max-capture', 'label', 'operator', 'jwks', 'jwks-url'] as const) {
    if (values[name] !== undefined && !allowed.includes(name)) throw new UsageError(`${kind} does not take --${name}`);
  }
  const tenant = values.tenant === undefined ? {} : { tenant: values.tenant };
  const operand = (name: string): string => {
    if (operands.length !== 1 || operands[0] === undefined || operands[0] === '') throw new UsageError(`${kind} takes one ${name}`);
    return operands[0];
  };
  const noOperands = () => {
    if (operands.length > 0) throw new UsageError(`${kind} takes no further arguments, got ${operands.join(' ')}`);
  };
  switch (kind) {
    case 'tenants create':
    case 'tenants disable':
    case 'tenants enable':
      return { command: { kind, tenant: operand('tenant id') }, ...global };
    case 'tenants list':
      noOperands();
      return { command: { kind }, ...global };
    case 'tokens issue': {
      noOperands();
      return { command: { kind, ...tenant, ...issueOptions(values) }, ...global };
    }
    case 'tokens list':
    case 'policy show':
    case 'quotas show':
    case 'bridges list':
    case 'bridges clear':
    case 'bridges dead-letters':
    case 'bridges redrive':
      noOperands();
      return { command: { kind, ...tenant }, ...global };
    case 'tokens revoke':
    case 'tokens rotate':
      return { command: { kind, ...tenant, tokenId: operand('token id') }, ...global };
    case 'quotas set':
      return { command: { kind, ...tenant, changes: quotaChanges(kind, operands) }, ...global };
    case 'operators list':
      noOperands();
      return { command: { kind, ...tenant }, ...global };
    case 'operators add': {
      const name = operand('operator name');
      if ((values.jwks === undefined) === (values['jwks-url'] === undefined)) throw new UsageError('operators add takes exactly one of --jwks <file> and --jwks-url <url>');
      return { command: { kind, ...tenant, name, ...(values.jwks === undefined ? {} : { jwks: values.jwks }), ...(values['jwks-url'] === undefined ? {} : { jwksUrl: values['jwks-url'] }) }, ...global };
    }
    case 'operators remove':
      return { command: { kind, ...tenant, name: operand('operator name') }, ...global };
    case 'push list':
      noOperands();
      return { command: { kind }, ...global };
    case 'push delete':
      return { command: { kind, id: operand('subscription id') }, ...global };
    case 'bridges set':
      return { command: { kind, ...tenant, source: operand('sinks file (or - for standard input)') }, ...global };
    default:
      return { command: { kind: 'policy set', ...tenant, source: operand('policy file (or - for standard input)') }, ...global };
  }
}

/** `name=value` operands: a positive whole number, or `default` to remove the quota. Names are checked by the relay. */
function quotaChanges(kind: string, operands: readonly string[]): Record<string, number | null> {
  if (operands.length === 0) throw new UsageError(`${kind} takes one or more <name>=<number|default>`);
  const changes: Record<string, number | null> = {};
  for (const operand of operands) {
    const match = /^([A-Za-z]+)=(\d+|default)$/.exec(operand);
    if (match === null) throw new UsageError(`${kind}: ${JSON.stringify(operand)} is not <name>=<positive whole number | default>`);
    const [, name, value] = match as unknown as [string, string, string];
    changes[name] = value === 'default' ? null : Number(value);
  }
  return changes;
}

function issueOptions(values: { scopes?: string; agents?: string; 'expires-in'?: string; 'max-capture'?: string; label?: string; operator?: string }) {
  if (values.scopes === undefined) throw new UsageError('tokens issue needs --scopes (comma-separated: emit, consume, control, admin)');
  const scopes = parseScopes(values.scopes);
  if (scopes === undefined) throw new UsageError(`--scopes must be a comma-separated list of emit, consume, control, admin; got ${JSON.stringify(values.scopes)}`);
  let agents: string[] | undefined;
  if (values.agents !== undefined) {
    agents = values.agents.split(',').map((agent) => agent.trim()).filter((agent) => agent !== '');
    if (agents.length === 0) throw new UsageError('--agents must name at least one agent');
  }
  let expiresInSeconds: number | undefined;
  if (values['expires-in'] !== undefined) {
    expiresInSeconds = Number(values['expires-in']);
    if (!/^\d+$/.test(values['expires-in']) || !Number.isSafeInteger(expiresInSeconds) || expiresInSeconds <= 0) {
      throw new UsageError(`--expires-in is a positive number of seconds; got ${JSON.stringify(values['expires-in'])}`);
    }
  }
  const maxCapture = values['max-capture'];
  if (maxCapture !== undefined && !isCaptureLevel(maxCapture)) throw new UsageError(`--max-capture is one of ${CAPTURE_LEVELS.join(', ')}; got ${JSON.stringify(maxCapture)}`);
  return {
    scopes,
    ...(agents === undefined ? {} : { agents }),
    ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
    ...(maxCapture === undefined ? {} : { maxCapture }),
    ...(values.label === undefined ? {} : { label: values.label }),
    ...(values.operator === undefined ? {} : { operator: values.operator }),
  };
}
